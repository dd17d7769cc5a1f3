//go:build integration

package integration

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMasterKilledInFlight (issue 11 item 4): what a master SIGKILL (a
// crash, an OOM kill, a watchdog kill) does to the connections its children
// are serving. With the shipped KillMode=mixed systemd SIGKILLs the rest of
// the cgroup as soon as the main process is gone: every in-flight request
// is lost. With KillMode=process (a drop-in, not shipped) the children see
// EOF on their back-channel, finish their connection and exit, while the
// restarted master serves new ones. In both, connections that arrive after
// the kill wait in systemd's socket and are served by the new master.
// docs/operations.md ("When the master dies") states these numbers.
func TestMasterKilledInFlight(t *testing.T) {
	const inFlight, late = 10, 5
	for _, tc := range []struct {
		killMode  string // "" keeps the shipped unit
		completed int    // in-flight requests answered after the kill
	}{
		{"", 0},
		{"KillMode=process\n", inFlight},
	} {
		name := "mixed-shipped"
		if tc.killMode != "" {
			name = "process-dropin"
		}
		t.Run(name, func(t *testing.T) {
			a := NewActdBox(t)
			pool := Pool{
				Port:    freePort(t),
				Config:  "handler-delay = 4s\nstart-children = 12\nmin-children = 12\nmax-children = 16\n",
				Service: tc.killMode,
			}
			a.SetUp(pool)
			before := a.Activate(pool.Addr(), serviceUnit)
			slow := fanOut(pool.Addr(), inFlight, 60*time.Second)
			a.WaitPoolLine(serviceUnit, 5*time.Second, fmt.Sprintf("%d busy", inFlight), func(n []int) bool { return n[poolBusy] >= inFlight })

			a.Run("systemctl", "kill", "--kill-who=main", "--signal=SIGKILL", serviceUnit)
			queued := fanOut(pool.Addr(), late, 60*time.Second)
			completed, children := 0, map[int]bool{}
			for _, r := range slow.wait() {
				if r.err == nil {
					completed++
					children[r.answer.PID] = true
				}
			}
			t.Logf("KillMode %q: %d of %d in-flight requests answered after the master's SIGKILL", tc.killMode, completed, inFlight)
			if completed != tc.completed {
				t.Errorf("in-flight requests answered: got %d of %d, want %d", completed, inFlight, tc.completed)
			}
			for i, r := range queued.wait() {
				if r.err != nil {
					t.Errorf("connection %d made after the kill: %v, want it served by the restarted master", i, r.err)
				}
			}
			after := waitService(t, a.Bus, serviceUnit, 20*time.Second, "restarted", func(s ServiceState) bool {
				return s.ActiveState == "active" && s.NRestarts >= 1
			})
			if after.MainPID == before.MainPID || after.NRestarts != 1 {
				t.Errorf("master: got PID %d with NRestarts %d, want a new one (not %d) after 1 restart", after.MainPID, after.NRestarts, before.MainPID)
			}
			for pid := range children {
				a.waitGone(pid, 10*time.Second)
			}
		})
	}
}

// waitGone fails the test unless pid has exited in the box within timeout:
// a child of a dead master must not linger.
func (a *ActdBox) waitGone(pid int, timeout time.Duration) {
	a.t.Helper()
	status := fmt.Sprintf("/proc/%d/root/proc/%d/status", a.PID, pid)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(status); os.IsNotExist(err) {
			return
		}
	}
	a.t.Errorf("child PID %d of the killed master still runs %v later", pid, timeout)
}
