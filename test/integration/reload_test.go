//go:build integration

package integration

import (
	"testing"
	"time"
)

// retireGrace is how long after `systemctl reload` returns an old child may
// still answer: a request it was serving, or the rest of an accept streak
// under saturation (at most 50 ms, docs/protocol.md). actd reload waits
// until no old child takes a new connection (issue 22: old children used
// to answer up to 978 ms after it returned in exclusive mode, 57 ms in
// dispatch mode).
const retireGrace = 100 * time.Millisecond

// TestReloadUnderLoad is scenario 4: systemctl reload under a client loop
// starts a new generation of children in the same master, and no request
// fails; once it returns, only new PIDs answer (after retireGrace), in
// dispatch and in exclusive mode.
func TestReloadUnderLoad(t *testing.T) {
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) { reloadUnderLoad(t, "accept = "+mode+"\n") })
	}
}

func reloadUnderLoad(t *testing.T, config string) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t), Config: config}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)

	load := StartLoad(pool.Addr(), 4, 2*time.Millisecond, 30*time.Second)
	waitAnswered(t, load, 100, 10*time.Second)
	reloadAt := time.Now()
	a.Run("systemctl", "reload", serviceUnit)
	reloadedAt := time.Now()
	waitService(t, a.Bus, serviceUnit, 30*time.Second, "active again", func(s ServiceState) bool {
		return s.ActiveState == "active"
	})
	// The grace is the thing tested: answers from after it must all come
	// from new children; then wait for 100 of them.
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
			t.Errorf("child PID %d answered before the reload and still %v after it returned, want only the new generation (old %v, new %v)",
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
