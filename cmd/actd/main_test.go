package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/prefork/worker"
)

// The test binary plays actd itself (envAsActd, inherited by the children,
// which run the child subcommand) and a worker program (argument lazyArg).
const (
	envAsActd = "ACTD_TEST_AS_ACTD"
	lazyArg   = "lazy-worker"
	failArg   = "failing-worker"    // exits 1 at once
	oldArg    = "revision-1-worker" // hello without capabilities (reload_test.go)
)

func TestMain(m *testing.M) {
	switch {
	case len(os.Args) == 2 && os.Args[1] == lazyArg:
		os.Exit(lazyWorker())
	case len(os.Args) == 2 && os.Args[1] == failArg:
		os.Exit(1)
	case len(os.Args) == 2 && os.Args[1] == oldArg:
		os.Exit(revision1Worker())
	case len(os.Args) == 2 && os.Args[1] == remoteArg:
		os.Exit(remoteAddrWorker()) // proxy_test.go
	case os.Getenv(envAsActd) != "":
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// lazyWorker says hello and idle and answers pings, but never accepts: a pool
// of these is wedged while looking alive.
func lazyWorker() int {
	env, err := worker.FromEnv()
	if err != nil {
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = worker.ServeEnv(ctx, worker.Env{Mode: env.Mode, Channel: env.Channel, Slot: env.Slot}, func(net.Conn) {})
	if err != nil {
		return 1
	}
	return 0
}

// actd is one actd master started from the test binary.
type actd struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	dir    string
	sock   string // --listen unix socket
	ctl    string // --control-socket
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startActd starts actd listening on a unix socket in a temp dir, with args
// added, and env added to its environment.
func startActd(t *testing.T, env []string, args ...string) *actd {
	t.Helper()
	return startActdUnder(t, nil, env, args...)
}

// startActdUnder is startActd run through wrapper (a command and its
// arguments, such as prlimit), if not empty.
func startActdUnder(t *testing.T, wrapper, env []string, args ...string) *actd {
	t.Helper()
	dir := t.TempDir()
	a := &actd{dir: dir, sock: filepath.Join(dir, "listen.sock"), ctl: filepath.Join(dir, "ctl.sock"), stderr: &syncBuffer{}}
	argv := append(append(wrapper, os.Args[0], "--listen", "unix:"+a.sock, "--control-socket", a.ctl, "--log-format", "text"), args...)
	a.start(t, argv, env)
	a.waitControl(t)
	return a
}

// waitControl waits until the control socket accepts: listening, not only
// bound (the file exists from bind(2) on).
func (a *actd) waitControl(t *testing.T) {
	t.Helper()
	waitFor(t, "control socket", 10*time.Second, func() bool {
		c, err := net.Dial("unix", a.ctl)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// get sends one HTTP request to the pool and returns the body.
func (a *actd) get() (string, error) {
	c, err := net.DialTimeout("unix", a.sock, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return "", err
	}
	var body string
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		body = sc.Text()
	}
	if !strings.HasPrefix(body, "slot=") {
		return body, fmt.Errorf("bad answer %q (%v)", body, sc.Err())
	}
	return body, nil
}

// status returns the pool's status document.
func (a *actd) status(t *testing.T) statusDoc {
	t.Helper()
	raw, err := fetchStatus(a.ctl)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var d statusDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("status %q: %v", raw, err)
	}
	return d
}

// wait waits for actd to exit and returns its exit status.
func (a *actd) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case <-done:
		return a.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("actd still running after %v", within)
	}
	return -1
}

func (a *actd) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := a.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid still exists (and is no zombie of ours).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// start runs argv (the test binary playing actd, maybe behind a wrapper)
// with env added, killed at the end of the test, its stderr logged if the
// test failed.
func (a *actd) start(t *testing.T, argv, env []string) {
	t.Helper()
	a.cmd = exec.Command(argv[0], argv[1:]...)
	a.cmd.Env = append(append(os.Environ(), envAsActd+"=1"), env...)
	a.cmd.Stderr = a.stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.cmd.Process.Kill()
		a.cmd.Wait()
		if t.Failed() {
			t.Logf("actd stderr:\n%s", a.stderr)
		}
	})
}
