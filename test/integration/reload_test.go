//go:build integration

package integration

import (
	"testing"
	"time"
)

// retireGrace is how long after a reload completes an old child may still
// finish the request it was serving.
const retireGrace = time.Second

// TestReloadUnderLoad is scenario 4: systemctl reload under a client loop
// starts a new generation of children (new PIDs answer, old ones no more)
// in the same master, and no request fails.
func TestReloadUnderLoad(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t)}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)

	load := StartLoad(pool.Addr(), 4, 2*time.Millisecond, 30*time.Second)
	waitAnswered(t, load, 100, 10*time.Second)
	reloadAt := time.Now()
	a.Run("systemctl", "reload", serviceUnit)
	waitService(t, a.Bus, serviceUnit, 30*time.Second, "active again", func(s ServiceState) bool {
		return s.ActiveState == "active"
	})
	reloadedAt := time.Now()
	time.Sleep(retireGrace)
	waitAnswered(t, load, 100, 10*time.Second)
	res := load.Stop()
	t.Logf("client loop: %v", res)

	if res.Refused != 0 || res.Failed != 0 {
		t.Errorf("client loop across the reload: got %d refused and %d failed %q, want none", res.Refused, res.Failed, res.Errors)
	}
	old := res.PIDs(time.Time{}, reloadAt)
	fresh := res.PIDs(reloadedAt.Add(retireGrace), time.Now())
	if len(fresh) == 0 {
		t.Errorf("no answers after the reload")
	}
	for pid := range fresh {
		if old[pid] {
			t.Errorf("child PID %d answered before the reload and still %v after it completed, want a new generation (old %v, new %v)",
				pid, retireGrace, keys(old), keys(fresh))
		}
	}
	after := serviceState(t, a.Bus, serviceUnit)
	if after.MainPID != before.MainPID || after.NRestarts != 0 {
		t.Errorf("master: got PID %d with NRestarts %d, want PID %d kept across the reload", after.MainPID, after.NRestarts, before.MainPID)
	}
}

// keys returns the keys of a set, for messages.
func keys(set map[int]bool) []int {
	var k []int
	for pid := range set {
		k = append(k, pid)
	}
	return k
}
