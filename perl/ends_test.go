package perl_test

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChildEnds covers the two ways the handler ends its own child, in
// both modes: psgix.harakiri (the application asks; the answer is sent
// first) and actd's --busy-timeout (SIGQUIT: the handler logs the Perl
// stack of the request in hand, with the request, and exits). actd starts
// a child in place of each.
func TestChildEnds(t *testing.T) {
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, "app.psgi", "--busy-timeout", "1s", "--busy-kill-grace", "5s")
			t.Run("harakiri", func(t *testing.T) { checkHarakiri(t, p) })
			t.Run("busy-timeout", func(t *testing.T) { checkBusyTimeout(t, p) })
		})
	}
}

// checkHarakiri: /harakiri is answered, then its child leaves the pool.
func checkHarakiri(t *testing.T, p *pool) {
	conn, r := dial(t, p)
	bodies := converse(t, conn, r, []exchange{{"GET", get("/harakiri"), 200, "", `^harakiri pid=\d+`, nil}})
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after the harakiri answer: got %d bytes, %v, want EOF", n, err)
	}
	pid, _ := strconv.Atoi(pidRE.FindStringSubmatch(bodies[0])[1])
	if _, err := p.WaitStatus(func(d statusDoc) bool { return !hasPID(d, pid) && d.Pool.Idle > 0 }); err != nil {
		t.Errorf("harakiri child pid %d: got it still in the pool, want it gone and replaced: %v", pid, err)
	}
}

// checkBusyTimeout: a request that outlives --busy-timeout loses its
// connection; the log has the handler's stack dump naming the request and
// the application's line it was stuck on.
func checkBusyTimeout(t *testing.T, p *pool) {
	conn, r := dial(t, p)
	io.WriteString(conn, get("/sleep?ms=5000"))
	if n, err := r.Read(make([]byte, 1)); err == nil {
		t.Errorf("request past --busy-timeout: got %d bytes of answer, want the connection closed", n)
	}
	want := regexp.MustCompile(`Plack::Handler::Actd: SIGQUIT while serving "GET /sleep", pid \d+(?s:.*)called at \S*app\.psgi line \d+`)
	deadline := time.Now().Add(readyBound)
	for {
		b, _ := os.ReadFile(p.Log)
		if want.Match(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("actd log: got no stack dump matching %s within %v", want, readyBound)
		}
		time.Sleep(pollEvery)
	}
	if _, err := p.WaitStatus(func(d statusDoc) bool { return d.Pool.Stats.Hung == 1 && d.Pool.Idle > 0 }); err != nil {
		t.Errorf("status: got no hung child replaced: %v", err)
	}
	if b, _ := os.ReadFile(p.Log); !strings.Contains(string(b), `request="GET /sleep"`) {
		t.Errorf("actd log: got no busy-timeout line with request=\"GET /sleep\", want one")
	}
}

func hasPID(d statusDoc, pid int) bool {
	for _, s := range d.Pool.Slots {
		if s.PID == pid {
			return true
		}
	}
	return false
}
