package prefork

import (
	"log/slog"

	"github.com/actd/actd/cgroup"
)

// memory is the pool's view of its children's memory: the unit's control
// groups, whose OOM counter tells an OOM kill from another SIGKILL (oom.go),
// and each child's figure, read every tick, against MaxChildMemory.
type memory struct {
	groups   cgroup.Groups // the master's groups when New ran: the unit's
	oomKills uint64        // the unit's OOM counter, as far as exits account for it
	oomKnown bool          // the counter can be read
	tree     *cgroup.Tree  // per-child groups (cgroup.go), nil without delegation
	noClone3 bool          // clone3 was refused: children are moved after their start
}

// newMemory finds the master's control groups and reads their OOM counter
// once, so that only kills from now on count. A host without a memory
// controller for the unit is said once; OOM kills then read as "killed by
// signal".
func newMemory(cfg Config, log *slog.Logger) memory {
	g, err := cgroup.Self()
	if err != nil {
		log.Warn("cannot read the control groups: OOM kills are reported as kills by signal", "err", err)
		return memory{}
	}
	m := memory{groups: g}
	m.oomKills, m.oomKnown = g.OOMKills()
	if !m.oomKnown {
		log.Warn("no memory controller for the unit: OOM kills are reported as kills by signal", "cgroup", g.V2)
	}
	m.tree = arrange(g, cfg, log)
	return m
}

// measure reads slot s's memory and CPU figures, and recycles its child
// when it holds more than MaxChildMemory: drained after the connection in
// hand, replaced by the scaler like any retired child. A child that has not
// served yet is left alone (in shared mode, where children do not report
// connections, it is not): recycling it would not bring a smaller one.
func (p *Pool) measure(s *slot) {
	u, err := readUsage(s.pid)
	if err != nil {
		return // exited; reap follows
	}
	s.usage = u
	limit := p.cfg.MaxChildMemory
	if limit == 0 || u.memory <= limit || s.ending() || s.served == 0 && p.cfg.Mode.SpeaksProtocol() {
		return
	}
	p.stats.MemRecycled++
	p.retire(s, "memory", "memory", u.memory, "limit", limit, "served", s.served)
}
