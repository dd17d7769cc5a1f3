//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"
)

// upgradeVersion is the version of the package built for the upgrade; it
// must sort above the tree's VERSION.
const upgradeVersion = "0.1.1"

// TestUpgradeUnderLoad is scenario 8: installing a newer package while a
// client loop runs restarts the pool on the new binary and refuses no
// connection (the socket stays in systemd's hands). python3-actd, which
// depends on this very version of actd, is upgraded with it in one dpkg
// run, and its new postinst byte-compiles the new sources.
func TestUpgradeUnderLoad(t *testing.T) {
	newer := buildDeb(t, upgradeVersion)
	newerPython := buildPackage(t, upgradeVersion, pythonPackage)
	a := NewActdBox(t)
	a.InstallPackage(pythonPackage)
	pool := Pool{Port: freePort(t)}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)
	oldVersion := strings.TrimSpace(a.Run("dpkg-query", "-W", "-f", "${Version}", "actd"))
	if oldVersion == upgradeVersion {
		t.Fatalf("the tree's version is %s already: raise upgradeVersion", oldVersion)
	}

	load := StartLoad(pool.Addr(), 4, 2*time.Millisecond, 60*time.Second)
	waitAnswered(t, load, 100, 10*time.Second)
	a.InstallDeb(newer, newerPython)
	after := waitService(t, a.Bus, serviceUnit, 60*time.Second, "running the new binary", func(s ServiceState) bool {
		return s.ActiveState == "active" && s.MainPID != before.MainPID
	})
	waitAnswered(t, load, 100, 20*time.Second)
	res := load.Stop()
	t.Logf("client loop: %v; master PID %d → %d", res, before.MainPID, after.MainPID)

	if res.Refused != 0 {
		t.Errorf("refused connections during the upgrade: got %d, want 0", res.Refused)
	}
	if res.Failed != 0 {
		t.Errorf("failed requests during the upgrade: got %d %q, want 0", res.Failed, res.Errors)
	}
	for _, pkg := range []string{"actd", pythonPackage} {
		if got := strings.TrimSpace(a.Run("dpkg-query", "-W", "-f", "${Version}", pkg)); got != upgradeVersion {
			t.Errorf("installed version of %s: got %s, want %s", pkg, got, upgradeVersion)
		}
	}
	if out := a.Run("find", "/usr/lib/python3/dist-packages/actd/__pycache__", "-name", "wsgi.cpython-*.pyc"); out == "" {
		t.Errorf("after the upgrade of %s: got no __pycache__/wsgi.cpython-*.pyc, want the new postinst's", pythonPackage)
	}
	if out := a.Run(actdBinary, "version"); !strings.Contains(out, upgradeVersion) {
		t.Errorf("actd version: got %q, want it to say %s", out, upgradeVersion)
	}
	exe := a.Run("readlink", "/proc/"+itoa(after.MainPID)+"/exe")
	if strings.Contains(exe, "(deleted)") {
		t.Errorf("master after the upgrade runs %s, want the new binary", strings.TrimSpace(exe))
	}
}
