//go:build integration

package integration

import (
	"os"
	"os/exec"
	"testing"
)

// systemdBinary is the systemd the box runs as its PID 1.
const systemdBinary = "/usr/lib/systemd/systemd"

// requireBoxTools skips t unless a box can be booted here: root, unshare,
// nsenter and systemd present. The cgroup-v2 check is in newBoxCgroup.
func requireBoxTools(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: booting a systemd box needs root")
	}
	requireTool(t, "unshare", "util-linux")
	requireTool(t, "nsenter", "util-linux")
	if _, err := os.Stat(systemdBinary); err != nil {
		t.Skipf("skipping: no systemd to boot (install systemd): %v", err)
	}
}

// requireTool skips t unless tool is on the PATH (the box has the host's
// programs, so this holds for the box too); pkg is the Debian package that
// has it.
func requireTool(t *testing.T, tool, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("skipping: %s not found (install %s): %v", tool, pkg, err)
	}
}
