//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"
)

// badKey is the key of badConfig, which is out of range (max-children is at
// most 4096).
const (
	badKey    = "max-children"
	badConfig = "max-children = 99999\n"
)

// TestBadConfigFailsUnit is scenario 6, at start: a bad configuration makes
// the unit fail with exit status 78 (no restart loop), and the journal names
// the bad key.
func TestBadConfigFailsUnit(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t), Config: badConfig}
	a.SetUp(pool)

	out, code := a.ExitCode(actdBinary, "check-config", configPath)
	if code != 78 || !strings.Contains(out, badKey) {
		t.Errorf("actd check-config: got exit %d and %q, want 78 and a message naming %s", code, out, badKey)
	}
	if out, err := a.RunErr("systemctl", "start", serviceUnit); err == nil {
		t.Errorf("systemctl start %s with a bad config: succeeded, want it to fail\n%s", serviceUnit, out)
	}
	st := waitService(t, a.Bus, serviceUnit, 20*time.Second, "failed", func(s ServiceState) bool {
		return s.ActiveState == "failed"
	})
	if st.ExecMainStatus != 78 {
		t.Errorf("ExecMainStatus: got %d, want 78 (EX_CONFIG)", st.ExecMainStatus)
	}
	if st.NRestarts != 0 {
		t.Errorf("NRestarts: got %d, want 0 (restarting cannot fix a config)", st.NRestarts)
	}
	if journal := a.Journal(serviceUnit); !strings.Contains(journal, badKey) {
		t.Errorf("journalctl -u %s: does not name %s:\n%s", serviceUnit, badKey, journal)
	}
}

// TestBadConfigOnReloadKeepsServing is scenario 6, at reload: a bad
// configuration on systemctl reload leaves the running pool serving (same
// master, no failed request); the journal and STATUS name the bad key.
func TestBadConfigOnReloadKeepsServing(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t)}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)

	load := StartLoad(pool.Addr(), 4, 2*time.Millisecond, 30*time.Second)
	waitAnswered(t, load, 50, 10*time.Second)
	a.WriteFile(configPath, []byte(badConfig), 0o644)
	if out, err := a.RunErr("systemctl", "reload", serviceUnit); err == nil {
		t.Errorf("systemctl reload with a bad config: succeeded, want it to fail\n%s", out)
	}
	waitService(t, a.Bus, serviceUnit, 10*time.Second, "active", func(s ServiceState) bool {
		return s.ActiveState == "active"
	})
	waitAnswered(t, load, 200, 10*time.Second)
	res := load.Stop()
	t.Logf("client loop: %v", res)

	if res.Refused != 0 || res.Failed != 0 {
		t.Errorf("client loop across a bad reload: got %d refused and %d failed %q, want none", res.Refused, res.Failed, res.Errors)
	}
	after := serviceState(t, a.Bus, serviceUnit)
	if after.MainPID != before.MainPID || after.NRestarts != 0 {
		t.Errorf("master: got PID %d with NRestarts %d, want PID %d still serving", after.MainPID, after.NRestarts, before.MainPID)
	}
	// actd.conf promises the reason "in the journal and in STATUS".
	waitService(t, a.Bus, serviceUnit, 5*time.Second, "naming "+badKey+" in StatusText", func(s ServiceState) bool {
		return strings.Contains(s.StatusText, badKey) && statusLine.MatchString(s.StatusText)
	})
	if journal := a.Journal(serviceUnit); !strings.Contains(journal, badKey) {
		t.Errorf("journalctl -u %s: does not name %s after the bad reload:\n%s", serviceUnit, badKey, journal)
	}
}
