package perl_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGrandchildGetsNoListener: a program the application starts with fork
// and exec gets no socket of the pool: Actd::Worker marks the listeners and
// the back-channel close-on-exec as it takes them (a child the zygote
// forks too, as it makes its own worker), so such a program cannot keep the
// port open nor accept on it after its child is gone (issue 22 finding 9).
func TestGrandchildGetsNoListener(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		flags      []string
	}{
		{"dispatch", "dispatch", nil},
		{"exclusive", "exclusive", nil},
		{"preload", "dispatch", []string{"--preload", "--start-timeout", "60s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPool(t, tc.mode, "spawn.psgi", tc.flags...)
			pid := grandchild(t, p.addr)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			execed(t, pid, "sleep")
			dir := fmt.Sprintf("/proc/%d/fd/", pid)
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) == 0 {
				t.Fatalf("grandchild %d: %d fds, %v", pid, len(entries), err)
			}
			for _, e := range entries {
				if target, _ := os.Readlink(dir + e.Name()); strings.HasPrefix(target, "socket:") {
					t.Errorf("grandchild %d fd %s: got %s, want no socket of the pool", pid, e.Name(), target)
				}
			}
		})
	}
}

// grandchild asks the application for a grandchild and returns its PID.
func grandchild(t *testing.T, addr string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, ioBound)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioBound))
	fmt.Fprint(conn, "GET / HTTP/1.0\r\nHost: test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	pid, convErr := strconv.Atoi(string(body))
	if err != nil || convErr != nil {
		t.Fatalf("got body %q, %v, want the grandchild's PID", body, err)
	}
	return pid
}

// execed waits until process pid runs program (its fork has exec'd):
// close-on-exec acts at the exec, so until then the fork holds every fd.
func execed(t *testing.T, pid int, program string) {
	t.Helper()
	for end := time.Now().Add(ioBound); ; time.Sleep(5 * time.Millisecond) {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.HasPrefix(string(cmdline), program+"\x00") {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("process %d: cmdline %q (%v) after %v, want %s", pid, cmdline, err, ioBound, program)
		}
	}
}
