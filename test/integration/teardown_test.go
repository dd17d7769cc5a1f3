//go:build integration

package integration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
)

// TestHarnessTeardown checks the harness's promises to the host: a box's
// systemd leaves the host's /tmp alone (it runs on an overlay root), and
// when the test ends its processes and cgroups are gone.
func TestHarnessTeardown(t *testing.T) {
	marker, err := os.CreateTemp("", "actd-it-host-marker-")
	if err != nil {
		t.Fatal(err)
	}
	marker.Close()
	defer os.Remove(marker.Name())

	var pid int
	var cgroup string
	t.Run("box", func(t *testing.T) {
		b := NewBox(t)
		pid, cgroup = b.PID, b.cgroup
		// Boot ran systemd-tmpfiles; make sure it is done in the box.
		b.RunErr("systemctl", "start", "systemd-tmpfiles-setup.service")
		out := b.Run("sh", "-c", "test ! -e "+marker.Name()+" && echo clean")
		if out != "clean\n" {
			t.Errorf("box sees the host's /tmp: got %q, want clean", out)
		}
	})
	if _, err := os.Stat(marker.Name()); err != nil {
		t.Errorf("host's %s after a box booted: %v, want it untouched", marker.Name(), err)
	}
	if pid == 0 {
		t.Fatal("box did not boot")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("box PID %d after teardown: got %v, want it gone", pid, err)
	}
	if _, err := os.Stat(cgroup); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("box cgroup %s after teardown: got %v, want it gone", cgroup, err)
	}
}
