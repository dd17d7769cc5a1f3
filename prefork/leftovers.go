package prefork

// A child's descendants: a job it put in the background, a program it
// ran that forked, a grandchild that inherited its listeners (the worker
// libraries mark them close-on-exec, but a worker that does not, or a
// program that clears the flag, passes them on). Outliving the child, such
// a process keeps the listener open, and one that accepts on it takes
// connections the master never sees. With per-child cgroups (cgroup.go)
// every descendant stays in its child's slot-N leaf, wherever it was
// reparented to, so the master kills what is left there when it reaps the
// child, before the slot's next child starts in the same leaf. Without
// them, nothing is done: docs/operations.md, "A child's descendants".

// killLeftovers kills whatever slot s's child left in its cgroup leaf, as
// reap collects the child: logged as event=orphans and counted in
// Stats.Orphans. It does nothing without per-child cgroups, and for a child
// whose slot has no leaf of its own.
func (p *Pool) killLeftovers(s *slot) {
	if p.mem.tree == nil {
		return
	}
	pids, err := p.mem.tree.Kill(s.num)
	if err != nil {
		p.log.Warn("killing what a child left in its cgroup", "slot", s.num, "err", err)
	}
	if len(pids) == 0 {
		return
	}
	p.stats.Orphans += uint64(len(pids))
	p.log.Warn("killed what the child left in its cgroup", "event", "orphans", "slot", s.num, "pid", s.pid,
		"killed", len(pids), "pids", pids)
}
