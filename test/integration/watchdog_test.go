//go:build integration

package integration

import (
	"testing"
	"time"
)

// TestWatchdogRestartsFrozenMaster is scenario 2: with the master frozen
// (SIGSTOP) under a client loop, systemd's watchdog aborts and restarts it
// (Result=watchdog, NRestarts=1); the clients see no refused connection and
// every request is answered in the end (it waits in the socket's queue).
func TestWatchdogRestartsFrozenMaster(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t), Service: "WatchdogSec=3s\n"}
	a.SetUp(pool)
	watch := a.Watch(serviceUnit)
	before := a.Activate(pool.Addr(), serviceUnit)

	load := StartLoad(pool.Addr(), 4, 5*time.Millisecond, 60*time.Second)
	waitAnswered(t, load, 50, 10*time.Second)
	a.Run("systemctl", "kill", "--kill-who=main", "--signal=SIGSTOP", serviceUnit)
	waitService(t, a.Bus, serviceUnit, 30*time.Second, "restarted", func(s ServiceState) bool {
		return s.ActiveState == "active" && s.NRestarts >= 1 && s.MainPID != before.MainPID
	})
	waitAnswered(t, load, 50, 30*time.Second)
	res := load.Stop()
	t.Logf("client loop: %v", res)

	if res.Refused != 0 || res.Failed != 0 {
		t.Errorf("client loop across the watchdog restart: got %d refused and %d failed %q, want none", res.Refused, res.Failed, res.Errors)
	}
	if st := serviceState(t, a.Bus, serviceUnit); st.NRestarts != 1 {
		t.Errorf("NRestarts: got %d, want 1", st.NRestarts)
	}
	requireSaw(t, watch, "Service.Result", "watchdog")
}
