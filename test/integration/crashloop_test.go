//go:build integration

package integration

import (
	"regexp"
	"testing"
	"time"
)

// Bounds for a pool whose worker dies at once, over crashWindow: the master
// may use at most maxCrashCPU clock ticks (1/100 s) of CPU, and the box may
// see at most maxCrashForks new processes (a fork storm makes thousands).
const (
	crashWindow   = 10 * time.Second
	maxCrashCPU   = 50
	maxCrashForks = 60
)

// backoffStatus matches a STATUS= that tells of the backoff, e.g.
// "worker failing (exit status 3), 7 in a row, next start in 4.4s".
var backoffStatus = regexp.MustCompile(`(?i)backoff|next start in [0-9]`)

// TestCrashingWorkerBacksOff is scenario 7: with a worker that exits at
// start, STATUS shows the backoff, the master's CPU time stays low and it
// does not fork in a loop; a fixed config and a reload bring the pool back.
func TestCrashingWorkerBacksOff(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t), Config: "worker = /bin/sh -c \"exit 3\"\n"}
	a.SetUp(pool)
	a.Run("systemctl", "start", "--no-block", serviceUnit)

	st := waitService(t, a.Bus, serviceUnit, 15*time.Second, "showing a backoff", func(s ServiceState) bool {
		return backoffStatus.MatchString(s.StatusText)
	})
	t.Logf("StatusText: %q (%s)", st.StatusText, st.ActiveState)
	cpu0, pids0 := a.ProcStat(st.MainPID), a.LastPID()
	time.Sleep(crashWindow) // a window, the thing measured: CPU and forks within it
	cpu1, pids1 := a.ProcStat(st.MainPID), a.LastPID()
	t.Logf("over %v: master used %d ticks of CPU, %d PIDs were allocated in the box", crashWindow, cpu1-cpu0, pids1-pids0)
	if cpu1-cpu0 > maxCrashCPU {
		t.Errorf("master CPU over %v: got %d ticks, want at most %d", crashWindow, cpu1-cpu0, maxCrashCPU)
	}
	if pids1-pids0 > maxCrashForks {
		t.Errorf("processes started over %v: got %d, want at most %d (no fork storm)", crashWindow, pids1-pids0, maxCrashForks)
	}
	if now := serviceState(t, a.Bus, serviceUnit); now.MainPID != st.MainPID {
		t.Errorf("master: got PID %d, want %d (a crashing worker must not take the master down)", now.MainPID, st.MainPID)
	}

	a.WriteFile(configPath, []byte("# the built-in handler\n"), 0o644)
	a.Run("systemctl", "reload", serviceUnit)
	if _, err := get(pool.Addr(), 30*time.Second); err != nil {
		t.Fatalf("request after the fix and reload: %v", err)
	}
	fixed := waitService(t, a.Bus, serviceUnit, 10*time.Second, "active without backoff", func(s ServiceState) bool {
		return s.ActiveState == "active" && !backoffStatus.MatchString(s.StatusText)
	})
	if fixed.MainPID != st.MainPID {
		t.Errorf("master after the fix: got PID %d, want %d (reload, not restart)", fixed.MainPID, st.MainPID)
	}
}
