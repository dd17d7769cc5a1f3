package cgroup

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadMounts: the cgroup2 mount and the v1 memory mount are found in a
// mountinfo of a pure v2 host and of a hybrid one; other mounts are not.
func TestReadMounts(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       mounts
	}{
		{"pure v2", "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n", mounts{v2: "/sys/fs/cgroup"}},
		{"hybrid", "25 24 0:22 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n" +
			"26 25 0:23 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n" +
			"28 25 0:25 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n" +
			"30 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			mounts{v2: "/sys/fs/cgroup/unified", v1Memory: "/sys/fs/cgroup/memory"}},
		{"escaped space", `40 24 0:30 / /mnt/my\040cg rw - cgroup2 none rw` + "\n", mounts{v2: "/mnt/my cg"}},
		{"none", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", mounts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mountinfo")
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readMounts(path)
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v, want %+v", got, err, tc.want)
			}
		})
	}
}

// TestReadKey: a flat-keyed file gives the key's number; a missing key, a
// missing file or a value that is no number give false.
func TestReadKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.events")
	text := "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\nodd x\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, key string
		want      uint64
		ok        bool
	}{
		{path, "oom_kill", 2, true},
		{path, "oom", 3, true},
		{path, "absent", 0, false},
		{path, "odd", 0, false},
		{path + ".missing", "oom_kill", 0, false},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got, ok := readKey(tc.path, tc.key); got != tc.want || ok != tc.ok {
				t.Errorf("got %d, %v, want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestSelf: the test's own groups are found, and where a memory controller
// is visible its OOM counter reads.
func TestSelf(t *testing.T) {
	g, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("groups: %+v, memory controller: %v", g, g.HasMemory())
	if g.V2 == "" && g.V1Memory == "" {
		t.Skip("no cgroup hierarchy mounted")
	}
	if _, ok := g.OOMKills(); g.HasMemory() && !ok {
		t.Errorf("got no OOM counter for %+v, which has a memory controller", g)
	}
}

// TestArrangeNeedsDelegation: a group systemd did not delegate (the test's
// own, a plain directory) is left alone: Arrange refuses it and moves
// nothing.
func TestArrangeNeedsDelegation(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Groups
	}{
		{"no v2 group", Groups{}},
		{"plain directory", Groups{V2: t.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.g.Delegated() {
				t.Fatalf("got delegated %+v, want not", tc.g)
			}
			if tree, err := Arrange(tc.g); err == nil || tree != nil {
				t.Errorf("got %v, %v, want an error", tree, err)
			}
		})
	}
}

// TestLeafLimits: with the memory controller, a leaf gets its memory.max
// and memory.high, "max" where a limit is 0, written again for each child
// (a reload may change them); without it, neither file is written.
func TestLeafLimits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		memory    bool
		lim       Limits
		max, high string
	}{
		{"both", true, Limits{High: 50 << 20, Max: 80 << 20}, "83886080", "52428800"},
		{"high only", true, Limits{High: 50 << 20}, "max", "52428800"},
		{"none", true, Limits{}, "max", "max"},
		{"no memory controller", false, Limits{High: 50 << 20, Max: 80 << 20}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := &Tree{dir: t.TempDir(), memory: tc.memory}
			if tc.memory { // as cgroupfs has them: writable by root, or by the delegated user
				os.Mkdir(filepath.Join(tree.dir, "slot-3"), 0o755)
				for _, f := range []string{"memory.max", "memory.high"} {
					os.WriteFile(filepath.Join(tree.dir, "slot-3", f), []byte("max"), 0o644)
				}
			}
			for range 2 {
				fd, err := tree.Leaf(3, tc.lim)
				if err != nil {
					t.Fatal(err)
				}
				unix.Close(fd)
			}
			for file, want := range map[string]string{"memory.max": tc.max, "memory.high": tc.high} {
				got, _ := os.ReadFile(filepath.Join(tree.dir, "slot-3", file))
				if string(got) != want {
					t.Errorf("%s: got %q, want %q", file, got, want)
				}
			}
		})
	}
}
