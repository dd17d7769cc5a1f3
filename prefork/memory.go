package prefork

import (
	"log/slog"
	"time"

	"github.com/actd/actd/cgroup"
)

// memory is the pool's view of its children's memory: the unit's control
// groups, whose OOM counter tells an OOM kill from another SIGKILL (oom.go),
// the per-child groups children start in (cgroup.go), and each child's
// figure, read every tick and at the end of its connections, against
// MaxChildMemory. It reads and decides; the pool retires and counts.
type memory struct {
	cfg      *Config // the pool's, as reloaded
	log      *slog.Logger
	groups   cgroup.Groups // the master's groups when New ran: the unit's
	oomKills uint64        // the unit's OOM counter, as far as exits account for it
	oomKnown bool          // the counter can be read
	tree     *cgroup.Tree  // per-child groups (cgroup.go), nil without delegation
	noClone3 bool          // clone3 was refused: children are moved after their start
}

// newMemory finds the master's control groups and reads their OOM counter
// once, so that only kills from now on count. A host without a memory
// controller for the unit is said once; OOM kills then read as "killed by
// signal". cfg is the pool's config, which a reload replaces in place.
func newMemory(cfg *Config, log *slog.Logger) memory {
	g, err := cgroup.Self()
	if err != nil {
		log.Warn("cannot read the control groups: OOM kills are reported as kills by signal", "err", err)
		return memory{cfg: cfg, log: log}
	}
	m := memory{cfg: cfg, log: log, groups: g}
	m.oomKills, m.oomKnown = g.OOMKills()
	if !m.oomKnown {
		log.Warn("no memory controller for the unit: OOM kills are reported as kills by signal", "cgroup", g.V2)
	}
	m.tree = arrange(g, *cfg, log)
	return m
}

// memoryEvery is how old a child's memory reading may be at the end of a
// connection before it is read again (due): at most 100 reads a second per
// child (about 25 µs each, docs/operations.md "Memory") when it is far
// from MaxChildMemory, however fast it serves.
const memoryEvery = 10 * time.Millisecond

// read reads slot s's memory and CPU figures into s.usage, keeping its
// trend. It returns false if it could not (the child exited, and reap
// follows).
func (m *memory) read(s *slot, now time.Time) bool {
	u, err := readUsage(s.pid)
	if err != nil {
		return false
	}
	u.at, u.trend = now, s.usage.trend
	s.usage = u
	return true
}

// over reports whether slot s, as last read, holds more than
// MaxChildMemory and is to be recycled. It returns false without a limit,
// for a child told to end, and for one that has not served yet (in shared
// mode, where children do not report connections, it has): recycling it
// would not bring a smaller one.
func (m *memory) over(s *slot) bool {
	limit := m.cfg.MaxChildMemory
	return limit > 0 && s.usage.memory > limit && !s.ending() && (s.served > 0 || !m.cfg.Mode.SpeaksProtocol())
}

// due reports whether slot s's memory should be read at the end of a
// connection. It returns false without MaxChildMemory, or for a child told
// to end; true while its growth per connection is not known yet (its first
// two connections), when its last reading is memoryEvery old, or when the
// last reading, or the last one at a connection's end plus the growth of
// the connections since, is within one connection's growth of the limit:
// near the limit it is read at every connection's end, far from it at most
// once per memoryEvery.
func (m *memory) due(s *slot, now time.Time) bool {
	limit, u, tr := m.cfg.MaxChildMemory, s.usage, s.usage.trend
	switch {
	case limit == 0 || s.ending():
		return false
	case !tr.rated || now.Sub(u.at) >= memoryEvery:
		return true
	}
	return tr.reaches(u.memory, 1, limit) || tr.reaches(tr.base, s.finished()-tr.served+1, limit)
}

// room reports whether slot s has room for n more connections under
// MaxChildMemory by its growth so far: a dispatch-mode child under
// KeepAccepting serves up to a batch before its next report, so one near
// the limit gets plain orders, one connection each, and is read at the end
// of each. It returns true without a limit, false while the growth is not
// known yet.
func (m *memory) room(s *slot, n uint64) bool {
	limit, tr := m.cfg.MaxChildMemory, s.usage.trend
	if limit == 0 {
		return true
	}
	if !tr.rated {
		return false
	}
	return !tr.reaches(s.usage.memory, n, limit) && !tr.reaches(tr.base, s.finished()-tr.served+n, limit)
}

// measure reads slot s's figures, at every tick and at the end of a
// connection when due says so, and recycles its child when memory says it
// is over MaxChildMemory: drained after the connection in hand (if any),
// replaced by the scaler like any retired child. It reports whether it
// could read the figures (false: the child exited, and reap follows).
func (p *Pool) measure(s *slot) bool {
	if !p.mem.read(s, p.now) {
		return false
	}
	if p.mem.over(s) {
		p.stats.MemRecycled++
		p.retire(s, "memory", "memory", s.usage.memory, "limit", p.cfg.MaxChildMemory, "served", s.served)
	}
	return true
}

// measureEnd is called when slot s reports the end of connections (an I
// after a busy spell, an S): it measures s if due, so that a child that
// crossed MaxChildMemory with the connection it just finished is drained
// before it gets another one, not a tick later.
func (p *Pool) measureEnd(s *slot) {
	if p.mem.due(s, p.now) && p.measure(s) {
		s.usage.trend = s.usage.trend.next(s.usage.memory, s.finished())
	}
}
