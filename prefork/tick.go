package prefork

import (
	"fmt"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// tick is the loop's periodic work: deadlines, pings, scaling. Its cost grows
// with the pool, but it runs once per tick period, not per connection.
func (p *Pool) tick() {
	p.nextTick = p.now.Add(p.tickPeriod())
	p.harvest()
	p.measureQueues()
	p.reports.starting = false
	for _, s := range p.slots {
		if s.live() {
			p.checkSlot(s)
			p.reports.starting = p.reports.starting || s.state == starting
		}
	}
	p.ready.check(p)
	p.armNext()
	p.checkStuck()
	if p.stop != nil {
		p.checkStop()
		return
	}
	if p.now.Sub(p.lastScale) >= p.cfg.ScalePeriod {
		p.lastScale = p.now
		p.scale()
	}
}

// checkSlot enforces slot s's deadlines and pings it when it is due.
func (p *Pool) checkSlot(s *slot) {
	age := p.now.Sub(s.since)
	switch {
	case s.killed:
		return
	case !s.deadline.IsZero() && p.now.After(s.deadline):
		p.hung(s, "did not exit when told")
	case s.state == starting && age > p.cfg.StartTimeout:
		p.hung(s, fmt.Sprintf("no hello within %v", p.cfg.StartTimeout))
	case s.state == ordered && age > p.cfg.PingTimeout:
		p.hung(s, fmt.Sprintf("no answer to an accept order within %v", p.cfg.PingTimeout))
	case s.state == busy:
		p.checkBusy(s)
	case s.state == idle:
		p.checkPing(s)
	}
	if s.gen == p.gen && s.state != starting && p.backoff.proves(s.started, p.now) {
		p.backoff.ok() // the worker starts and stays up: the failure streak is over
	}
}

// hung kills a child that stopped answering.
func (p *Pool) hung(s *slot, why string) {
	p.stats.Hung++
	p.kill(s, "hung", why)
}

// checkPing pings an idle child it has not heard from for PingInterval, and
// kills one whose ping went unanswered for PingTimeout.
func (p *Pool) checkPing(s *slot) {
	if !s.pingSentAt.IsZero() {
		if p.now.Sub(s.pingSentAt) > p.cfg.PingTimeout {
			p.stats.PingsFailed++
			p.stats.pingFails++
			p.hung(s, fmt.Sprintf("no answer to ping within %v", p.cfg.PingTimeout))
		}
		return
	}
	if p.now.Sub(s.heard) < p.cfg.PingInterval {
		return
	}
	s.pingSeq++
	if p.send(s, protocol.Message{Type: protocol.Ping, Value: s.pingSeq}) {
		s.pingSentAt = p.now
	}
}

// checkBusy enforces BusyTimeout: SIGQUIT first (a Go child dumps its
// goroutines), SIGKILL BusyKillGrace later.
func (p *Pool) checkBusy(s *slot) {
	if p.cfg.BusyTimeout <= 0 || p.now.Sub(s.since) <= p.cfg.BusyTimeout {
		return
	}
	if s.quitAt.IsZero() {
		s.quitAt = p.now
		p.stats.Hung++
		p.log.Warn("busy too long: SIGQUIT", "event", "hung", "slot", s.num, "pid", s.pid, "busy_for", p.now.Sub(s.since).String())
		p.signal(s, unix.SIGQUIT)
		return
	}
	if p.now.Sub(s.quitAt) > p.cfg.BusyKillGrace {
		p.kill(s, "hung", fmt.Sprintf("busy for more than %v", p.cfg.BusyTimeout))
	}
}

// scale applies one scaler decision to the current generation.
func (p *Pool) scale() {
	if p.cfg.Mode == protocol.Shared {
		p.keepShared()
		return
	}
	ps := p.poolState()
	d := Scale(ps, p.cfg.limits(), p.ramp)
	p.ramp = d.Ramp
	p.stats.AtMax = d.AtMax
	// A child that died unasked is replaced even if the scaler would not
	// miss it: the pool keeps the size demand gave it.
	want := max(d.Spawn, min(p.replace, p.cfg.MaxChildren-ps.Children))
	started := 0
	for range p.backoff.allows(p.now, want) {
		if !p.start() {
			break
		}
		started++
	}
	p.replace = max(p.replace-started, 0)
	if d.Retire > 0 {
		if n := p.highestIdle(p.gen); n >= 0 {
			p.retire(p.slots[n], "too many idle")
		}
	}
	p.retireOldIdle()
}

// keepShared keeps a shared-mode pool at StartChildren: it cannot scale on
// idleness it does not see.
func (p *Pool) keepShared() {
	want := p.cfg.StartChildren - p.poolState().Children
	for range p.backoff.allows(p.now, max(want, 0)) {
		if !p.start() {
			break
		}
	}
	if want <= 0 {
		for _, s := range p.slots {
			if s.live() && s.gen != p.gen {
				p.retire(s, "old generation")
			}
		}
	}
}

// poolState counts the current generation for the scaler.
func (p *Pool) poolState() PoolState {
	var ps PoolState
	for _, s := range p.slots {
		if !s.counts(p.gen) {
			continue
		}
		ps.Children++
		if s.state == starting || s.state == idle {
			ps.Spare++
		}
	}
	// Exclusive children report only connections that last, so the queue
	// is what shows a pool saturated by short ones.
	ps.Queued = p.queued()
	return ps
}

// queued returns the connections waiting on the listeners beyond the
// orders already sent for them.
func (p *Pool) queued() int {
	n := 0
	for _, l := range p.listeners {
		n += max(l.queue-l.orders, 0)
	}
	return n
}

// measureQueues reads every listener's accept-queue length once per tick,
// for the scaler and the stuck check.
func (p *Pool) measureQueues() {
	for _, l := range p.listeners {
		q, ok := QueueDepth(l.FD)
		if !ok {
			q = -1
		}
		l.queue = q
	}
}

// highestIdle returns the highest idle slot of generation gen, or -1.
func (p *Pool) highestIdle(gen int) int {
	for n := p.idle.highest(); n >= 0; n-- {
		if p.idle.has(n) && p.slots[n].gen == gen {
			return n
		}
	}
	return -1
}

// genHasIdle reports whether generation gen has an idle child.
func (p *Pool) genHasIdle(gen int) bool { return p.highestIdle(gen) >= 0 }

// retireOldIdle drains the idle children of older generations once the
// current one has an idle child to take over.
func (p *Pool) retireOldIdle() {
	if !p.genHasIdle(p.gen) {
		return
	}
	for _, s := range p.slots {
		if s.state == idle && s.gen != p.gen && !s.draining {
			p.retire(s, "old generation")
		}
	}
}

// checkStuck notes a listener whose connections wait while children are idle
// and nothing gets accepted between two ticks: the pool does not work.
func (p *Pool) checkStuck() {
	stuck := false
	if p.idle.len() > 0 && p.stop == nil && p.cfg.Mode != protocol.Shared {
		for _, l := range p.listeners {
			if l.queue > 0 && p.stats.Served == p.stats.servedAtTick {
				stuck = true
			}
		}
	}
	p.stats.Stuck = stuck && p.stats.stuckTicks > 0
	if stuck {
		p.stats.stuckTicks++
	} else {
		p.stats.stuckTicks = 0
	}
	p.stats.servedAtTick = p.stats.Served
}
