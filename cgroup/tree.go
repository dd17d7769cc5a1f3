package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// MasterLeaf is the group the master moves itself into: cgroup v2 lets a
// group hand controllers to its children only while it holds no process.
const MasterLeaf = "master"

// Tree is a delegated v2 group arranged for a pool: the master in
// MasterLeaf, each child in a leaf of its slot ("slot-3"), so that
// systemd-cgls shows the slots and each child can have its own limit.
type Tree struct {
	dir    string // the unit's group
	memory bool   // the leaves have the memory controller
}

// Delegated reports whether systemd delegated g's v2 group to the unit
// (Delegate=): it carries the trusted.delegate or user.delegate extended
// attribute "1" (systemd 251 and later set both) and the process can write
// it (not under ProtectControlGroups=).
func (g Groups) Delegated() bool {
	if g.V2 == "" || unix.Access(filepath.Join(g.V2, "cgroup.procs"), unix.W_OK) != nil {
		return false
	}
	for _, attr := range []string{"trusted.delegate", "user.delegate"} {
		var buf [8]byte
		if n, err := unix.Getxattr(g.V2, attr, buf[:]); err == nil && string(buf[:n]) == "1" {
			return true
		}
	}
	return false
}

// leafControllers are the controllers Arrange hands to the leaves, of
// those the unit's group has: memory for the limits and the figures, cpu
// and pids for systemd-cgtop's per-slot view.
var leafControllers = []string{"memory", "cpu", "pids"}

// Arrange moves the calling process into MasterLeaf of g's v2 group and
// hands the group's memory, cpu and pids controllers, those it has, to its
// leaves. It returns an error naming the step that failed; the process may
// then already be in MasterLeaf, which is harmless.
func Arrange(g Groups) (*Tree, error) {
	if !g.Delegated() {
		return nil, errors.New("cgroup: the unit's group is not delegated to it (Delegate=)")
	}
	leaf := filepath.Join(g.V2, MasterLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if err := write(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
		return nil, err
	}
	t := &Tree{dir: g.V2}
	data, err := os.ReadFile(filepath.Join(g.V2, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	for _, c := range strings.Fields(string(data)) {
		if !slices.Contains(leafControllers, c) {
			continue
		}
		if err := write(filepath.Join(g.V2, "cgroup.subtree_control"), "+"+c); err != nil {
			return nil, err
		}
		t.memory = t.memory || c == "memory"
	}
	return t, nil
}

// Memory reports whether each leaf has the memory controller: its own
// memory.max, memory.current and memory.events.
func (t *Tree) Memory() bool { return t.memory }

// Limits are a leaf's own memory limits, each 0 for none ("max").
type Limits struct {
	High uint64 // memory.high: above it the kernel reclaims and throttles the leaf
	Max  uint64 // memory.max: above it the kernel OOM-kills in the leaf
}

// Leaf returns an open directory fd of slot n's leaf, for clone3's
// CLONE_INTO_CGROUP (syscall.SysProcAttr.CgroupFD); the caller closes it.
// The leaf is created if missing, and with the memory controller its
// memory.high and memory.max are set to lim. It returns an error naming
// the file that could not be made or written.
func (t *Tree) Leaf(n int, lim Limits) (int, error) {
	dir := t.leaf(n)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return -1, fmt.Errorf("cgroup: %w", err)
	}
	if t.memory {
		if err := setLimits(dir, lim); err != nil {
			return -1, err
		}
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("cgroup: open %s: %w", dir, err)
	}
	return fd, nil
}

// setLimits writes lim to the memory.max and memory.high of group dir ("max"
// for 0). It returns the first write's error.
func setLimits(dir string, lim Limits) error {
	for _, f := range []struct {
		name  string
		value uint64
	}{{"memory.max", lim.Max}, {"memory.high", lim.High}} {
		v := "max"
		if f.value > 0 {
			v = strconv.FormatUint(f.value, 10)
		}
		if err := write(filepath.Join(dir, f.name), v); err != nil {
			return err
		}
	}
	return nil
}

// Move moves process pid into slot n's leaf, made by Leaf. It returns an
// error if the write fails (the process is gone, or the leaf is).
func (t *Tree) Move(n, pid int) error {
	return write(filepath.Join(t.leaf(n), "cgroup.procs"), strconv.Itoa(pid))
}

// write writes s to the control file path.
func write(path, s string) error {
	if err := os.WriteFile(path, []byte(s), 0); err != nil {
		return fmt.Errorf("cgroup: write %q to %s: %w", s, path, err)
	}
	return nil
}
