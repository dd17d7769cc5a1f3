//go:build integration

package integration

import (
	"regexp"
	"strconv"
	"testing"
)

// maxExposure is the packaging target for systemd-analyze security.
const maxExposure = 2.0

// exposureLine matches the verdict of systemd-analyze security UNIT.
var exposureLine = regexp.MustCompile(`Overall exposure level for (\S+): ([0-9.]+)`)

// TestSecurityExposure is scenario 10: systemd-analyze security, run by the
// box's systemd on the installed units, scores them at most maxExposure.
func TestSecurityExposure(t *testing.T) {
	a := NewActdBox(t)
	a.WriteFile("/etc/actd/demo.conf", []byte("# the built-in handler\n"), 0o644)
	for _, unit := range []string{serviceUnit, "actd@demo.service"} {
		t.Run(unit, func(t *testing.T) {
			out, err := a.RunErr("systemd-analyze", "security", "--no-pager", unit)
			m := exposureLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("systemd-analyze security %s: no verdict (%v):\n%s", unit, err, out)
			}
			score, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatalf("exposure %q: %v", m[2], err)
			}
			t.Logf("%s: exposure %.1f", unit, score)
			if score > maxExposure {
				t.Errorf("exposure of %s: got %.1f, want at most %.1f\n%s", unit, score, maxExposure, out)
			}
		})
	}
}
