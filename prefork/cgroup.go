package prefork

import (
	"errors"
	"log/slog"
	"syscall"

	"github.com/actd/actd/cgroup"

	"golang.org/x/sys/unix"
)

// Per-child control groups. Where systemd delegated the unit's v2 group
// (Delegate=yes, and a writable cgroupfs: ProtectControlGroups=no), the
// master moves itself into a leaf "master" and starts each child in a leaf
// of its slot, "slot-N" (clone3 CLONE_INTO_CGROUP: no moment outside it).
// With the v2 memory controller each leaf gets memory.max =
// ChildMemoryMax, so a child that outgrows it is OOM-killed alone and the
// others never feel it, and memory.high a quarter above MaxChildMemory
// (childLimits), so that a child that outgrows its recycling point within
// one connection is reclaimed and slowed down alone, before the unit's
// MemoryMax makes the kernel kill one of the pool. Without delegation
// children share the unit's group, as before.

// arrange sets up per-child groups where g allows, and says once at start
// what it could not do. It returns nil when children share the unit's group.
func arrange(g cgroup.Groups, cfg Config, log *slog.Logger) *cgroup.Tree {
	if !g.Delegated() {
		if cfg.ChildMemoryMax > 0 {
			log.Warn("--child-memory-max needs the unit's cgroup delegated (Delegate=yes, ProtectControlGroups=no): children share the unit's memory limit",
				"cgroup", g.V2)
		}
		return nil
	}
	t, err := cgroup.Arrange(g)
	if err != nil {
		log.Warn("no per-child cgroups, children share the unit's group", "cgroup", g.V2, "err", err)
		return nil
	}
	if !t.Memory() {
		log.Warn("per-child cgroups without the memory controller: no per-child memory limit (the host keeps memory on the cgroup v1 hierarchy?); --max-child-memory and OOM reports still work",
			"cgroup", g.V2, "child_memory_max", cfg.ChildMemoryMax)
		return t
	}
	lim := childLimits(cfg)
	log.Info("per-child cgroups", "cgroup", g.V2, "child_memory_max", lim.Max, "child_memory_high", lim.High)
	return t
}

// forkInto starts the worker program prog with attr in slot num's group:
// born there through clone3 (CLONE_INTO_CGROUP). Where clone3 is refused
// (ENOSYS: systemd's seccomp filter refuses it under RestrictNamespaces=,
// as it cannot look into clone3's flags, so that libc falls back to clone)
// the child starts in the master's group and is moved right after its exec.
// Without per-child groups it is plain ForkExec. It returns the child's PID
// or ForkExec's error.
func (m *memory) forkInto(num int, prog Program, attr *syscall.ProcAttr) (int, error) {
	fd := m.leaf(num)
	if fd < 0 {
		return syscall.ForkExec(prog.Path, prog.Args, attr)
	}
	defer unix.Close(fd)
	if !m.noClone3 {
		attr.Sys.UseCgroupFD, attr.Sys.CgroupFD = true, fd
		pid, err := syscall.ForkExec(prog.Path, prog.Args, attr)
		attr.Sys.UseCgroupFD = false
		if !errors.Is(err, syscall.ENOSYS) {
			return pid, err
		}
		m.noClone3 = true
		m.log.Info("clone3 refused (a seccomp filter): children are moved into their cgroup just after their start")
	}
	pid, err := syscall.ForkExec(prog.Path, prog.Args, attr)
	if err == nil {
		m.move(num, pid)
	}
	return pid, err
}

// moveInto moves pid into slot num's group, where it has one: a forked
// child, born in its zygote's group (forks.go).
func (m *memory) moveInto(num, pid int) {
	if g := m.leaf(num); g >= 0 {
		unix.Close(g)
		m.move(num, pid)
	}
}

// move moves pid into slot num's group, and logs a failure: the child
// runs on in the master's group.
func (m *memory) move(num, pid int) {
	if err := m.tree.Move(num, pid); err != nil {
		m.log.Warn("child cgroup", "slot", num, "pid", pid, "err", err)
	}
}

// leaf returns an open fd of slot num's group for a child's start, or -1
// when children share the unit's group (or the leaf cannot be made:
// logged, and the child starts in the master's group instead).
func (m *memory) leaf(num int) int {
	if m.tree == nil || num < 0 {
		return -1 // num -1: a zygote stays in the master's leaf (zygote.go)
	}
	fd, err := m.tree.Leaf(num, childLimits(*m.cfg))
	if err != nil {
		m.log.Warn("child cgroup", "slot", num, "err", err)
		return -1
	}
	return fd
}

// childLimits returns the memory limits of a child's group under cfg:
// memory.max = ChildMemoryMax, and memory.high = MaxChildMemory and a
// quarter, room for the connection that takes a child over its recycling
// point (read at that connection's end, memory.go), which the kernel then
// makes give back page cache and slows down, rather than let it grow on
// into the unit's limit. memory.high is left off (0) without
// MaxChildMemory, and where it would not be below memory.max.
func childLimits(cfg Config) cgroup.Limits {
	lim := cgroup.Limits{Max: cfg.ChildMemoryMax}
	if m := cfg.MaxChildMemory; m > 0 {
		lim.High = m + m/highHeadroom
	}
	if lim.Max > 0 && lim.High >= lim.Max {
		lim.High = 0
	}
	return lim
}

// highHeadroom: memory.high is MaxChildMemory plus MaxChildMemory /
// highHeadroom.
const highHeadroom = 4
