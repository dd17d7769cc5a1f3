package examples_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
)

// Bounds on waiting for actd; none is a speed assertion, each only stops a
// broken run from hanging.
const (
	readyBound = 20 * time.Second // start pool said hello
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
	*pooltest.Proc
	addr string // host:port it listens on
}

// statusDoc is what `actd status --json` prints.
type statusDoc = pooltest.Status

// startPool starts actd with worker in mode, and any further flags, and
// waits until its start pool is ready. Cleanup stops it (SIGTERM, then
// SIGKILL) if the test did not, and prints actd's log if the test failed.
func startPool(t *testing.T, actd, mode string, worker []string, flags ...string) *pool {
	t.Helper()
	control := filepath.Join(t.TempDir(), "ctl.sock")
	addr := pooltest.FreeAddr(t)
	args := append([]string{"--listen", addr, "--accept", mode, "--control-socket", control,
		"--log-format", "text"}, flags...)
	args = append(append(args, "--"), worker...)
	p := &pool{Proc: pooltest.Start(t, exec.Command(actd, args...), control, readyBound), addr: addr}
	if _, err := p.WaitStatus(pooltest.Ready); err != nil {
		t.Fatalf("pool not ready: %v", err)
	}
	return p
}

// complaints returns the warnings and errors in actd's log: a child killed
// (hung, garbage, or slow to drain), one that died, a failure to start one,
// and the like. Overload warnings are left out: a burst of clients may well
// find every child busy for a moment.
func (p *pool) complaints() ([]string, error) {
	b, err := os.ReadFile(p.Log)
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
