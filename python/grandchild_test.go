package python_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestGrandchildGetsNoListener: a program the application starts in the
// background in a way that passes on every inheritable fd (subprocess with
// close_fds=False) gets no socket of the pool: the adapter marks the
// listeners and the back-channel close-on-exec before the application
// loads (actd.fds), and a child the zygote forks gets its back-channel so
// too. Such a program cannot keep the port open nor accept on it after
// its child is gone (issue 22 finding 9).
func TestGrandchildGetsNoListener(t *testing.T) {
	py := python(t)
	for _, tc := range []struct {
		name, mode string
		flags      []string
	}{
		{"dispatch", "dispatch", nil},
		{"exclusive", "exclusive", nil},
		{"preload", "dispatch", preloadFlags},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPool(t, tc.mode, []string{py, "-m", "actd.wsgi", "spawnapp:app"}, tc.flags...)
			replies, err := exchange(p.addr, "GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
			if err != nil || len(replies) != 1 {
				t.Fatalf("got %v, %v, want one reply", replies, err)
			}
			pid, err := strconv.Atoi(replies[0].body)
			if err != nil {
				t.Fatalf("got body %q, want the grandchild's PID", replies[0].body)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			for fd, target := range fdTargets(t, pid) {
				if strings.HasPrefix(target, "socket:") {
					t.Errorf("grandchild %d fd %s: got %s, want no socket of the pool", pid, fd, target)
				}
			}
		})
	}
}

// fdTargets returns what each open fd of process pid points to.
func fdTargets(t *testing.T, pid int) map[string]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd/", pid)
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("grandchild %d: %d fds, %v", pid, len(entries), err)
	}
	out := map[string]string{}
	for _, e := range entries {
		out[e.Name()], _ = os.Readlink(dir + e.Name())
	}
	return out
}
