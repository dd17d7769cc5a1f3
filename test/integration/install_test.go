//go:build integration

package integration

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestInstallAndActivate is scenario 1: install the .deb, enable --now
// actd.socket; the service stays inactive until the first connection, which
// is served; systemctl status and the D-Bus StatusText show the pool line;
// actd status in the box shows the scoreboard.
func TestInstallAndActivate(t *testing.T) {
	// The package's own address, 127.0.0.1:7333, in the box's own network:
	// the host may use that port.
	a := NewActdBoxWith(t, BoxConfig{OwnNetwork: true})
	pool := Pool{}
	if got := unitActiveState(t, a.Bus, socketUnit); got != "inactive" {
		t.Errorf("%s right after install: got %s, want inactive (nothing starts on install)", socketUnit, got)
	}
	a.SetUp(pool)

	if got := unitActiveState(t, a.Bus, socketUnit); got != "active" {
		t.Fatalf("%s after enable --now: got %s, want active", socketUnit, got)
	}
	if got := unitActiveState(t, a.Bus, serviceUnit); got != "inactive" {
		t.Errorf("%s before the first connection: got %s, want inactive", serviceUnit, got)
	}
	answer, err := a.Get(pool.Addr(), 30*time.Second)
	if err != nil {
		t.Fatalf("first request: %v\n%s", err, a.Journal(serviceUnit))
	}
	st := waitService(t, a.Bus, serviceUnit, 10*time.Second, "active", func(s ServiceState) bool {
		return s.ActiveState == "active"
	})
	t.Logf("answered by child PID %d; master PID %d", answer.PID, st.MainPID)
	if answer.PID == int(st.MainPID) {
		t.Errorf("answer came from the master (PID %d), want a child", answer.PID)
	}

	n := a.WaitPoolLine(serviceUnit, 5*time.Second, "showing a pool line", func(n []int) bool { return n[poolServed] >= 1 })
	if n[poolMax] != 32 {
		t.Errorf("pool line max: got %d, want the default 32", n[poolMax])
	}
	status, _ := a.RunErr("systemctl", "status", "--no-pager", serviceUnit)
	if !strings.Contains(status, `Status: "`) || !statusLine.MatchString(status) {
		t.Errorf("systemctl status %s: no Status: line with the pool line in\n%s", serviceUnit, status)
	}

	t.Run("actd status", func(t *testing.T) {
		out, err := a.RunErr(actdBinary, "status")
		if err != nil {
			t.Fatalf("actd status: %v\n%s", err, out)
		}
		t.Logf("actd status:\n%s", out)
		if !mentionsPID(out, answer.PID) {
			t.Errorf("actd status: no line for child PID %d (which answered)", answer.PID)
		}
	})
	t.Run("actd status --json", func(t *testing.T) {
		out, err := a.RunErr(actdBinary, "status", "--json")
		if err != nil {
			t.Fatalf("actd status --json: %v\n%s", err, out)
		}
		var doc struct {
			Pool struct {
				Slots []slotPID `json:"slots"`
			} `json:"pool"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("actd status --json: not JSON: %v\n%s", err, out)
		}
		if !slices.Contains(doc.Pool.Slots, slotPID{answer.PID}) {
			t.Errorf("actd status --json: no slot with child PID %d (which answered)\n%s", answer.PID, out)
		}
	})
}

// slotPID is the PID of a slot in `actd status --json`.
type slotPID struct {
	PID int `json:"pid"`
}
