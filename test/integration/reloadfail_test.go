//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"
)

// TestReloadCanFail is scenario 6 for ExecReload=actd reload: systemctl
// reload returns non-zero for a bad config and for a worker that cannot
// start, naming the key or the reason in the journal, while the same master
// and its old children keep serving every request; a good config then
// reloads with exit 0.
func TestReloadCanFail(t *testing.T) {
	a := NewActdBox(t)
	const base = "start-timeout = 2s\n"
	pool := Pool{Port: freePort(t), Config: base}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)
	load := StartLoad(pool.Addr(), 2, 5*time.Millisecond, 90*time.Second)
	waitAnswered(t, load, 50, 10*time.Second)

	for _, tc := range []struct {
		name   string
		config string
		ok     bool
		want   string // in the journal of the unit after the reload
	}{
		{"bad config", base + badConfig, false, "actd reload: failed, the running pool keeps its old generation: " + configPath},
		{"worker cannot start", base + "worker = /bin/false\n", false, "no child of generation 2 said hello within start-timeout 2s"},
		{"good config", base, true, "actd reload: generation 3 serves alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.WriteFile(configPath, []byte(tc.config), 0o644)
			out, code := a.ExitCode("systemctl", "reload", serviceUnit)
			if (code == 0) != tc.ok {
				t.Errorf("systemctl reload: got exit status %d, want success %v\n%s", code, tc.ok, out)
			}
			st := waitService(t, a.Bus, serviceUnit, 10*time.Second, "active", func(s ServiceState) bool {
				return s.ActiveState == "active"
			})
			if st.MainPID != before.MainPID || st.NRestarts != 0 {
				t.Errorf("master: got PID %d with NRestarts %d, want PID %d kept", st.MainPID, st.NRestarts, before.MainPID)
			}
			if journal := a.Journal(serviceUnit); !strings.Contains(journal, tc.want) {
				t.Errorf("journalctl -u %s: lacks %q:\n%s", serviceUnit, tc.want, journal)
			}
			waitAnswered(t, load, 100, 10*time.Second)
		})
	}
	res := load.Stop()
	t.Logf("client loop: %v", res)
	if res.Refused != 0 || res.Failed != 0 {
		t.Errorf("client loop across failed reloads: got %d refused and %d failed %q, want none", res.Refused, res.Failed, res.Errors)
	}
}
