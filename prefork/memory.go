package prefork

import (
	"log/slog"
	"time"

	"github.com/actd/actd/cgroup"
)

// memory is the pool's view of its children's memory: the unit's control
// groups, whose OOM counter tells an OOM kill from another SIGKILL (oom.go),
// and each child's figure, read every tick and at the end of its
// connections (measureEnd), against MaxChildMemory.
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

// memoryEvery is how old a child's memory reading may be at the end of a
// connection before it is read again (memoryDue): at most 100 reads a
// second per child (about 25 µs each, docs/operations.md "Memory") when
// it is far from MaxChildMemory, however fast it serves.
const memoryEvery = 10 * time.Millisecond

// measure reads slot s's memory and CPU figures, at every tick and at the
// end of a connection when memoryDue says so, and recycles its child when
// it holds more than MaxChildMemory: drained after the connection in hand
// (if any), replaced by the scaler like any retired child. A child that has
// not served yet is left alone (in shared mode, where children do not
// report connections, it is not): recycling it would not bring a smaller
// one. It reports whether it could read the figures (false: the child
// exited, and reap follows).
func (p *Pool) measure(s *slot) bool {
	u, err := readUsage(s.pid)
	if err != nil {
		return false
	}
	u.at, u.trend = p.now, s.usage.trend
	s.usage = u
	limit := p.cfg.MaxChildMemory
	if limit == 0 || u.memory <= limit || s.ending() || s.served == 0 && p.cfg.Mode.SpeaksProtocol() {
		return true
	}
	p.stats.MemRecycled++
	p.retire(s, "memory", "memory", u.memory, "limit", limit, "served", s.served)
	return true
}

// measureEnd is called when slot s reports the end of connections (an I
// after a busy spell, an S): it measures s if memoryDue, so that a child
// that crossed MaxChildMemory with the connection it just finished is
// drained before it gets another one, not a tick later.
func (p *Pool) measureEnd(s *slot) {
	if p.memoryDue(s) && p.measure(s) {
		s.usage.trend = s.usage.trend.next(s.usage.memory, s.finished())
	}
}

// memoryDue reports whether slot s's memory should be read at the end of a
// connection. It returns false without MaxChildMemory, or for a child told
// to end; true while its growth per connection is not known yet (its first
// two connections), when its last reading is memoryEvery old, or when the
// last reading, or the last one at a connection's end plus the growth of
// the connections since, is within one connection's growth of the limit:
// near the limit it is read at every connection's end, far from it at most
// once per memoryEvery.
func (p *Pool) memoryDue(s *slot) bool {
	limit, u, tr := p.cfg.MaxChildMemory, s.usage, s.usage.trend
	switch {
	case limit == 0 || s.ending():
		return false
	case !tr.rated || p.now.Sub(u.at) >= memoryEvery:
		return true
	}
	return tr.reaches(u.memory, 1, limit) || tr.reaches(tr.base, s.finished()-tr.served+1, limit)
}

// trend is how a child's memory grows per connection, from the readings
// taken at the ends of its connections (a tick's reading may fall in the
// middle of one).
type trend struct {
	base   uint64 // memory at the last reading at a connection's end
	served uint64 // connections finished then
	growth uint64 // bytes per connection: the last growth seen, or half the estimate before if more
	rated  bool   // growth was seen once: two readings with connections between
}

// next returns t after a reading of memory at a connection's end, with
// served connections finished. A child that stops growing has its estimate
// halved at each such reading rather than zeroed, so that one connection
// that keeps nothing does not hide the leak of the next.
func (t trend) next(memory, served uint64) trend {
	if t.base == 0 || served <= t.served {
		return trend{base: memory, served: served, growth: t.growth, rated: t.rated}
	}
	seen := uint64(0)
	if memory > t.base {
		seen = (memory - t.base) / (served - t.served)
	}
	return trend{base: memory, served: served, growth: max(seen, t.growth/2), rated: true}
}

// reaches reports whether memory plus n connections' growth passes limit.
func (t trend) reaches(memory, n, limit uint64) bool {
	switch {
	case memory >= limit:
		return true
	case t.growth == 0:
		return false
	}
	return n > (limit-memory)/t.growth
}

// memoryRoom reports whether slot s has room for n more connections under
// MaxChildMemory by its growth so far: a dispatch-mode child under
// KeepAccepting serves up to a batch before its next report, so one near
// the limit gets plain orders, one connection each, and is read at the end
// of each. It returns true without a limit, false while the growth is not
// known yet.
func (p *Pool) memoryRoom(s *slot, n uint64) bool {
	limit, tr := p.cfg.MaxChildMemory, s.usage.trend
	if limit == 0 {
		return true
	}
	if !tr.rated {
		return false
	}
	return !tr.reaches(s.usage.memory, n, limit) && !tr.reaches(tr.base, s.finished()-tr.served+n, limit)
}

// finished returns how many connections slot s has finished: those it
// accepted but the one in hand while busy, whose growth a reading taken
// now (a tick's) sees only in part.
func (s *slot) finished() uint64 {
	if (s.state == busy || s.state == movingBusy) && s.served > 0 {
		return s.served - 1
	}
	return s.served
}
