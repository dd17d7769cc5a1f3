package python_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds on waiting; none is a speed assertion, each only stops a broken
// run from hanging.
const (
	readyBound = 60 * time.Second // the start pool said hello (Django imports slowly)
	stopBound  = 15 * time.Second
	pollEvery  = 50 * time.Millisecond
	ioTimeout  = 20 * time.Second
)

// debianPython is the interpreter Debian's python3-flask and python3-django
// install for; another python3 on PATH (pyenv) would not find them.
const debianPython = "/usr/bin/python3"

// python returns the python3 to run, or skips the test.
func python(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(debianPython); err == nil {
		return debianPython
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found (Debian package python3): the adapter needs it")
	}
	return p
}

// needModule skips the test if python cannot import module.
func needModule(t *testing.T, python, module, pkg string) {
	t.Helper()
	if err := exec.Command(python, "-c", "import "+module).Run(); err != nil {
		t.Skipf("%s cannot import %s (Debian package %s): %v", python, module, pkg, err)
	}
}

var (
	buildOnce sync.Once
	actdBin   string
	buildErr  error
)

// actd builds cmd/actd once per test binary and returns its path.
func actd(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "actd-python-test")
		if err != nil {
			buildErr = err
			return
		}
		actdBin = filepath.Join(dir, "actd")
		out, err := exec.Command("go", "build", "-o", actdBin, "github.com/actd/actd/cmd/actd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return actdBin
}

// pool is one running `actd --listen ADDR -- python3 -m actd.wsgi ...`.
type pool struct {
	actd    string
	addr    string
	control string
	log     string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// startPool starts actd in mode with the worker argv and further flags,
// the adapter importable (PYTHONPATH), and waits until it is ready.
func startPool(t *testing.T, mode string, worker []string, flags ...string) *pool {
	t.Helper()
	addr := freeAddr(t)
	args := append([]string{"--listen", addr, "--accept", mode}, flags...)
	return startActd(t, addr, append(append(args, "--"), worker...)...)
}

// startActd starts actd with args (plus its control socket and text logs),
// the adapter importable (PYTHONPATH) and testdata the working directory,
// and waits until it is ready to serve on addr.
func startActd(t *testing.T, addr string, args ...string) *pool {
	t.Helper()
	dir := t.TempDir()
	p := &pool{actd: actd(t), addr: addr, control: filepath.Join(dir, "ctl.sock"),
		log: filepath.Join(dir, "actd.log"), exited: make(chan struct{})}
	base := []string{"--control-socket", p.control, "--log-format", "text"}
	if !slices.Contains(args, "--start-timeout") {
		// Flask and Django import for seconds, more on a loaded machine:
		// the default 10 s would kill children that are only slow to start.
		base = append(base, "--start-timeout", "60s")
	}
	p.cmd = exec.Command(p.actd, append(base, args...)...)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Env = append(os.Environ(), "PYTHONPATH="+here, "PYTHONDONTWRITEBYTECODE=1")
	p.cmd.Dir = filepath.Join(here, "testdata")
	log, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start actd: %v", err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("actd log:\n%s", b)
		}
	})
	if _, err := p.waitStatus(func(d statusDoc) bool { return d.Pool.Ready && d.Pool.Idle > 0 }); err != nil {
		t.Fatalf("pool not ready: %v", err)
	}
	return p
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (p *pool) kill() {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-p.exited:
			return
		default:
		}
		p.cmd.Process.Signal(sig)
		select {
		case <-p.exited:
			return
		case <-time.After(stopBound):
		}
	}
	<-p.exited
}

// stop sends SIGTERM and returns actd's exit error.
func (p *pool) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(stopBound):
		return fmt.Errorf("actd still runs %v after SIGTERM", stopBound)
	}
}

// statusDoc is the part of `actd status --json` the tests read.
type statusDoc struct {
	Pool struct {
		Ready bool `json:"ready"`
		Idle  int  `json:"idle"`
		Slots []struct {
			Slot    int    `json:"slot"`
			State   string `json:"state"`
			PID     int    `json:"pid"`
			Request string `json:"request"`
		} `json:"slots"`
	} `json:"pool"`
}

func (p *pool) status() (statusDoc, error) {
	var doc statusDoc
	out, err := exec.Command(p.actd, "status", "--json", "--control-socket", p.control).Output()
	if err != nil {
		return doc, fmt.Errorf("actd status: %w", err)
	}
	return doc, json.Unmarshal(out, &doc)
}

// waitStatus polls `actd status` until cond holds, actd exits, or
// readyBound passes.
func (p *pool) waitStatus(cond func(statusDoc) bool) (statusDoc, error) {
	deadline := time.Now().Add(readyBound)
	for {
		doc, err := p.status()
		if err == nil && cond(doc) {
			return doc, nil
		}
		select {
		case <-p.exited:
			return doc, fmt.Errorf("actd exited: %v", p.waitErr)
		default:
		}
		if time.Now().After(deadline) {
			return doc, fmt.Errorf("not within %v: last status %+v, %v", readyBound, doc.Pool, err)
		}
		time.Sleep(pollEvery)
	}
}

// logText returns actd's log so far: its own lines and the children's stderr.
func (p *pool) logText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitLog polls the log until it contains every one of want.
func (p *pool) waitLog(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(readyBound)
	for {
		text := p.logText(t)
		missing := ""
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("log has no %q after %v", missing, readyBound)
		}
		time.Sleep(pollEvery)
	}
}

// reply is one response read off a raw connection.
type reply struct {
	status int
	header http.Header
	body   string
	close  bool // Connection: close (net/http takes it out of header)
}

// exchange writes raw to a new connection to addr and reads responses
// until the server closes it; methods lists each expected response's
// request method (HEAD responses have no body), "GET" if left short.
func exchange(addr, raw string, methods ...string) ([]reply, error) {
	conn, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := conn.Write([]byte(raw)); err != nil {
		return nil, err
	}
	return readReplies(bufio.NewReader(conn), methods)
}

func readReplies(r *bufio.Reader, methods []string) ([]reply, error) {
	var out []reply
	for i := 0; ; i++ {
		if _, err := r.Peek(1); err != nil {
			return out, nil // closed by the server
		}
		method := "GET"
		if i < len(methods) {
			method = methods[i]
		}
		resp, err := http.ReadResponse(r, &http.Request{Method: method})
		if err != nil {
			return out, fmt.Errorf("response %d: %w", i, err)
		}
		var body bytes.Buffer
		_, err = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			return out, fmt.Errorf("response %d body: %w", i, err)
		}
		out = append(out, reply{resp.StatusCode, resp.Header, body.String(), resp.Close})
	}
}

func dial(addr string) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err == nil {
		conn.SetDeadline(time.Now().Add(ioTimeout))
	}
	return conn, err
}

func readAll(conn net.Conn) ([]reply, error) {
	return readReplies(bufio.NewReader(conn), nil)
}
