package examples_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds on waiting for actd; none is a speed assertion, each only stops a
// broken run from hanging.
const (
	readyBound = 20 * time.Second // start pool said hello
	stopBound  = 15 * time.Second // SIGTERM to exit; idle children drain at once
	pollEvery  = 50 * time.Millisecond
)

// build compiles pkg into dir and returns the binary's path.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// pool is one running `actd --listen ADDR -- WORKER` started by the test.
type pool struct {
	actd    string // the actd binary, also used for `actd status`
	addr    string // host:port it listens on
	control string // its control socket
	log     string // its stdout and stderr, text log format
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd.Wait has returned
	waitErr error         // cmd.Wait's result, once exited is closed
}

// startPool starts actd with worker in mode, and any further flags, and
// waits until its start pool is ready. Cleanup stops it (SIGTERM, then
// SIGKILL) if the test did not, and prints actd's log if the test failed.
func startPool(t *testing.T, actd, mode string, worker []string, flags ...string) *pool {
	t.Helper()
	dir := t.TempDir()
	p := &pool{actd: actd, addr: freeAddr(t), control: filepath.Join(dir, "ctl.sock"), exited: make(chan struct{})}
	p.log = filepath.Join(dir, "actd.log")
	args := append([]string{"--listen", p.addr, "--accept", mode, "--control-socket", p.control,
		"--log-format", "text"}, flags...)
	args = append(append(args, "--"), worker...)
	p.cmd = exec.Command(actd, args...)
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
	t.Cleanup(func() { dumpLog(t, p.log) })
	t.Cleanup(p.kill)
	p.waitReady(t)
	return p
}

// freeAddr returns a loopback address with a port that was free a moment
// ago: the kernel picks it, we close it for actd to bind.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func dumpLog(t *testing.T, path string) {
	if !t.Failed() {
		return
	}
	b, _ := os.ReadFile(path)
	t.Logf("actd log:\n%s", b)
}

// kill stops actd if it still runs: SIGTERM, and SIGKILL if that is not
// enough. Its children see EOF on their back-channels and exit by themselves.
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

// waitReady polls the control socket until the pool is ready with an idle
// child.
func (p *pool) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(readyBound)
	for {
		doc, err := p.status()
		if err == nil && doc.Pool.Ready && doc.Pool.Idle > 0 {
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("actd exited before it was ready: %v", p.waitErr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool not ready after %v: last status %+v, err %v", readyBound, doc.Pool, err)
		}
		time.Sleep(pollEvery)
	}
}

// statusDoc is the part of `actd status --json` the test reads.
type statusDoc struct {
	PID  int `json:"pid"`
	Pool struct {
		Mode  string `json:"mode"`
		Ready bool   `json:"ready"`
		Idle  int    `json:"idle"`
		Busy  int    `json:"busy"`
		Stats struct {
			Served uint64 `json:"served"`
		} `json:"stats"`
		Slots []struct {
			Slot   int    `json:"slot"`
			State  string `json:"state"`
			PID    int    `json:"pid"`
			Served uint64 `json:"served"`
		} `json:"slots"`
	} `json:"pool"`
}

// status runs `actd status --json` against the pool's control socket.
func (p *pool) status() (statusDoc, error) {
	var doc statusDoc
	cmd := exec.Command(p.actd, "status", "--json", "--control-socket", p.control)
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

// waitStatus polls `actd status` until cond holds or readyBound passes,
// and returns the last status read and its error.
func (p *pool) waitStatus(cond func(statusDoc) bool) (statusDoc, error) {
	deadline := time.Now().Add(readyBound)
	for {
		doc, err := p.status()
		if err == nil && cond(doc) || time.Now().After(deadline) {
			return doc, err
		}
		time.Sleep(pollEvery)
	}
}

// stop sends SIGTERM to actd and returns its exit error, or an error if
// it has not exited within stopBound.
func (p *pool) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM to actd: %w", err)
	}
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(stopBound):
		return fmt.Errorf("actd still runs %v after SIGTERM", stopBound)
	}
}

// complaints returns the warnings and errors in actd's log: a child killed
// (hung, garbage, or slow to drain), one that died, a failure to start one,
// and the like. Overload warnings are left out: a burst of clients may well
// find every child busy for a moment.
func (p *pool) complaints() ([]string, error) {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		bad := strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")
		if bad && !strings.Contains(line, "event=overload") {
			lines = append(lines, line)
		}
	}
	return lines, nil
}

// leftBehind describes each of pids that still exists, running or a
// zombie, as a process whose command line or name contains one of names.
// A PID taken since by an unrelated process (reuse) does not count.
func leftBehind(pids []int, names ...string) []string {
	var left []string
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)) // "pid (comm) state ..." even for a zombie
		seen := strings.ReplaceAll(string(cmdline), "\x00", " ") + " " + string(stat)
		for _, name := range names {
			if strings.Contains(seen, name) {
				left = append(left, fmt.Sprintf("pid %d: %s", pid, strings.TrimSpace(seen)))
				break
			}
		}
	}
	return left
}
