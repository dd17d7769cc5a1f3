//go:build integration

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A box whose units' MemoryMax= is enforced (BoxConfig.Memory).
//
// On a pure cgroup-v2 host the box's own v2 group has the memory controller
// when the host's root delegates it (memory in cgroup.subtree_control): the
// plain box is enough. A hybrid host (systemd's hybrid layout: memory on
// the v1 hierarchy at /sys/fs/cgroup/memory, a v2 tree at
// /sys/fs/cgroup/unified with no controllers) gives a v2-only box no memory
// controller: MemoryMax= is accepted and nothing enforces it. There the
// box joins a v1 memory cgroup and a name=systemd one of its own before
// unshare --cgroup, and mounts them (bootScript, "hybrid"): its systemd then
// runs in the hybrid layout, MemoryMax= becomes memory.limit_in_bytes of the
// unit's v1 group, and the kernel OOM-kills in the unit when it is exceeded
// (oom_kill in memory.oom_control counts them).

// memoryCgroups returns the v1 cgroups a memory box must join, none when
// v2 (the box's group v2dir) has the memory controller, creating them and
// registering their removal (after the box's kill: register before it). It
// skips t when there is no memory controller to give the box.
func memoryCgroups(t *testing.T, v2dir, name string) []string {
	t.Helper()
	if controllers, err := os.ReadFile(filepath.Join(v2dir, "cgroup.controllers")); err == nil &&
		strings.Contains(" "+strings.TrimSpace(string(controllers))+" ", " memory ") {
		return nil
	}
	var dirs []string
	for _, hierarchy := range []string{"memory", "systemd"} {
		root := filepath.Join("/sys/fs/cgroup", hierarchy)
		if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
			t.Skipf("skipping: no memory controller for the box: not on cgroup v2, and no v1 %s hierarchy at %s: %v", hierarchy, root, err)
		}
		dir := filepath.Join(root, fmt.Sprintf("actd-it-%d-%s", os.Getpid(), name))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("skipping: v1 %s hierarchy not writable: %v", hierarchy, err)
		}
		t.Cleanup(func() {
			if err := removeCgroupTree(dir, 10*time.Second); err != nil {
				t.Errorf("tear down box cgroup: %v", err)
			}
		})
		dirs = append(dirs, dir)
	}
	return dirs
}

// joinV1 returns cmd run by a shell that first moves itself into the v1
// cgroups dirs: unshare --cgroup must start inside them, so that they are
// the roots of the box's cgroup namespace.
func joinV1(dirs []string, cmd *exec.Cmd) *exec.Cmd {
	script := `for d in $ACTD_IT_V1; do echo $$ > "$d/cgroup.procs"; done; exec "$@"`
	join := exec.Command("bash", append([]string{"-c", script, "join"}, cmd.Args...)...)
	join.Env = append(os.Environ(), "ACTD_IT_V1="+strings.Join(dirs, " "))
	return join
}
