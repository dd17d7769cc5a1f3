// Package pooltest runs a real actd for the tests of packages that drive it
// from outside, as an operator would (the language adapters, the
// examples): it builds the binary once, starts it with its output in a
// file, reads `actd status --json`, stops it, and reads what the kernel
// says of its processes. Its bounds only keep a broken run from hanging;
// none is a speed assertion.
package pooltest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/prefork"
)

// StopBound is how long Stop and Kill wait for actd to exit after a signal.
const StopBound = 15 * time.Second

// pollEvery is how often WaitStatus asks.
const pollEvery = 50 * time.Millisecond

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// Actd builds cmd/actd once per test binary and returns its path; a failed
// build fails t.
func Actd(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "actd-pooltest")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "actd")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/actd/actd/cmd/actd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build actd: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// Proc is one actd process a test started.
type Proc struct {
	Cmd     *exec.Cmd
	Control string        // its control socket
	Log     string        // the file with its stdout and stderr
	Bound   time.Duration // how long WaitStatus waits
	exited  chan struct{} // closed once Cmd.Wait returned
	waitErr error
}

// Start starts cmd (an actd command line that serves its control socket at
// control) with its output in a file in a temporary directory. Cleanup
// stops it and, if the test failed, prints its log. A failed start fails t.
func Start(t testing.TB, cmd *exec.Cmd, control string, bound time.Duration) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, Control: control, Log: filepath.Join(t.TempDir(), "actd.log"), Bound: bound,
		exited: make(chan struct{})}
	log, err := os.Create(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start actd: %v", err)
	}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			b, _ := os.ReadFile(p.Log)
			t.Logf("actd log:\n%s", b)
		}
	})
	return p
}

// Exited is closed once actd has exited; WaitErr is then its exit error.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// WaitErr returns actd's exit error, once Exited is closed.
func (p *Proc) WaitErr() error { return p.waitErr }

// Kill stops actd if it still runs: SIGTERM, then SIGKILL.
func (p *Proc) Kill() {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-p.exited:
			return
		default:
		}
		p.Cmd.Process.Signal(sig)
		select {
		case <-p.exited:
			return
		case <-time.After(StopBound):
		}
	}
	<-p.exited
}

// Stop sends SIGTERM and returns actd's exit error, or an error if it still
// runs StopBound later.
func (p *Proc) Stop() error {
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM to actd: %w", err)
	}
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(StopBound):
		return fmt.Errorf("actd still runs %v after SIGTERM", StopBound)
	}
}

// Status is the document `actd status --json` prints.
type Status struct {
	PID  int              `json:"pid"` // the master's
	Pool prefork.Snapshot `json:"pool"`
}

// Status runs `actd status --json` against the control socket. It returns
// the document, or the command's error with its stderr, or a decoding error.
func (p *Proc) Status() (Status, error) {
	var doc Status
	cmd := exec.Command(p.Cmd.Path, "status", "--json", "--control-socket", p.Control)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return doc, fmt.Errorf("actd status: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return doc, fmt.Errorf("actd status: %w in %q", err, out)
	}
	return doc, nil
}

// WaitStatus polls the status until cond holds and returns that status; or
// the last one and an error once actd exited or Bound passed.
func (p *Proc) WaitStatus(cond func(Status) bool) (Status, error) {
	deadline := time.Now().Add(p.Bound)
	for {
		doc, err := p.Status()
		if err == nil && cond(doc) {
			return doc, nil
		}
		select {
		case <-p.exited:
			return doc, fmt.Errorf("actd exited: %v", p.waitErr)
		default:
		}
		if time.Now().After(deadline) {
			return doc, fmt.Errorf("not within %v: last status %+v, %v", p.Bound, doc.Pool, err)
		}
		time.Sleep(pollEvery)
	}
}

// Held returns the status, with an error if it has no held line (the
// pool holds no connections: no accept filter).
func (p *Proc) Held() (Status, error) {
	s, err := p.Status()
	if err == nil && s.Pool.Held == nil {
		err = fmt.Errorf("status has no pool.held")
	}
	return s, err
}

// WaitHeld polls the status until it has a held line and cond holds.
func (p *Proc) WaitHeld(cond func(Status) bool) (Status, error) {
	return p.WaitStatus(func(s Status) bool { return s.Pool.Held != nil && cond(s) })
}

// WaitZygote polls the status until cond holds and, when actd runs with
// --preload, the status shows a zygote. It fails t with the zygote's last
// status if that does not come.
func (p *Proc) WaitZygote(t testing.TB, cond func(Status) bool) Status {
	t.Helper()
	preload := slices.Contains(p.Cmd.Args, "--preload")
	doc, err := p.WaitStatus(func(s Status) bool { return (s.Pool.Zygote != nil || !preload) && cond(s) })
	if err != nil {
		t.Fatalf("%v; zygote status %+v", err, doc.Pool.Zygote)
	}
	return doc
}

// IdleOf counts the idle children of generation gen.
func (s Status) IdleOf(gen int) int {
	n := 0
	for _, sl := range s.Pool.Slots {
		if sl.State == "I" && sl.Generation == gen {
			n++
		}
	}
	return n
}

// Serves reports whether a child of s says (its R report) it serves
// request, such as "GET /slow from 203.0.113.7:5555".
func (s Status) Serves(request string) bool {
	for _, sl := range s.Pool.Slots {
		if sl.Request == request {
			return true
		}
	}
	return false
}

// Ready reports whether the pool says it is ready and has an idle child.
func Ready(s Status) bool { return s.Pool.Ready && s.Pool.Idle > 0 }

// LogText returns actd's log so far: its own lines and the children's
// stderr. An unreadable log fails t.
func (p *Proc) LogText(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ParentOf returns pid's parent from /proc/PID/stat.
func ParentOf(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// MemoryOf returns pid's RSS and PSS in kB, from /proc/PID/smaps_rollup.
func MemoryOf(t testing.TB, pid int) (rss, pss int) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		t.Skipf("no smaps_rollup (kernel 4.14 or later): %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var kb int
		if _, err := fmt.Sscanf(sc.Text(), "%s %d kB", &name, &kb); err != nil {
			continue
		}
		switch name {
		case "Rss:":
			rss = kb
		case "Pss:":
			pss = kb
		}
	}
	return rss, pss
}
