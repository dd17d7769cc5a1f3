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
	for _, tool := range []string{"unshare", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not found (install util-linux): %v", tool, err)
		}
	}
	if _, err := os.Stat(systemdBinary); err != nil {
		t.Skipf("skipping: no systemd to boot (install systemd): %v", err)
	}
}
