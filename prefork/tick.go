package prefork

import (
	"fmt"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// tick is the loop's periodic work: deadlines, pings, scaling. Its cost grows
// with the pool, but it runs once per tick period, not per connection.
func (p *Pool) tick() {
	p.nextTick, p.hushed = p.now.Add(p.tickPeriod()), false // until quiet says otherwise, below
	p.harvest()
	p.measureQueues()
	p.reports.starting = false
	p.setPingAfter()
	for _, s := range p.slots {
		if s.live() {
			p.checkSlot(s)
			p.measure(s)
			p.reports.starting = p.reports.starting || s.state.starting()
		}
	}
	p.ready.check(p)
	p.mode.tick()
	p.tickZygotes()
	p.checkStuck()
	if p.stop != nil {
		p.checkStop()
		return
	}
	if p.now.Sub(p.lastScale) >= p.cfg.ScalePeriod {
		p.lastScale = p.now
		p.mode.scale()
	}
	if p.quiet() {
		if until := p.quietUntil(); until.After(p.nextTick) {
			p.nextTick = until
			p.hushed = true
			p.mode.hush()
		}
	}
}

// checkSlot enforces slot s's deadlines and pings it when it is due.
func (p *Pool) checkSlot(s *slot) {
	age := p.now.Sub(s.since)
	switch {
	case s.fate == killed:
		return
	case !s.deadline.IsZero() && p.now.After(s.deadline):
		p.hung(s, "did not exit when told")
	case s.state == starting && age > p.cfg.StartTimeout:
		p.hung(s, fmt.Sprintf("no hello within %v", p.cfg.StartTimeout))
	case s.state == greeted && age > p.cfg.StartTimeout:
		p.hung(s, fmt.Sprintf("hello but not ready within %v", p.cfg.StartTimeout))
	case s.state == ordered || s.state == moving:
		if age > p.cfg.PingTimeout {
			p.hung(s, fmt.Sprintf("no answer to an accept order within %v", p.cfg.PingTimeout))
		}
	case s.state == busy || s.state == movingBusy:
		p.checkBusy(s)
	case s.state == idle || s.state == standby:
		p.checkPing(s)
	}
	if s.gen == p.gen && !s.state.starting() && p.backoff.proves(s.started, p.now) {
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
	if p.now.Sub(s.heard) < p.pingAfter {
		return
	}
	s.pingSeq++
	if p.send(s, protocol.Message{Type: protocol.Ping, Value: s.pingSeq}) {
		s.pingSentAt = p.now
	}
}

// checkBusy logs a slow request and enforces BusyTimeout: SIGQUIT first (a
// Go child dumps its goroutines), SIGKILL BusyKillGrace later.
func (p *Pool) checkBusy(s *slot) {
	p.checkSlow(s)
	if p.cfg.BusyTimeout <= 0 || p.now.Sub(s.since) <= p.cfg.BusyTimeout {
		return
	}
	if s.quitAt.IsZero() {
		s.quitAt = p.now
		p.stats.Hung++
		p.log.Warn("busy too long: SIGQUIT", "event", "hung", "slot", s.num, "pid", s.pid,
			"busy_for", p.now.Sub(s.since).String(), "request", s.request)
		p.signal(s, unix.SIGQUIT)
		return
	}
	if p.now.Sub(s.quitAt) > p.cfg.BusyKillGrace {
		p.kill(s, "hung", fmt.Sprintf("busy for more than %v", p.cfg.BusyTimeout))
	}
}

// checkSlow logs, once per busy spell, a child busy for longer than
// SlowRequest (--slow-request), with the request it reported.
func (p *Pool) checkSlow(s *slot) {
	busyFor := p.now.Sub(s.since)
	if p.cfg.SlowRequest <= 0 || busyFor <= p.cfg.SlowRequest || s.slowAt.Equal(s.since) {
		return
	}
	s.slowAt = s.since
	p.stats.Slow++
	p.log.Warn("slow request", "event", "slow", "slot", s.num, "pid", s.pid,
		"busy_for", busyFor.Round(time.Millisecond).String(), "request", s.request)
}

// scale applies one scaler decision to the current generation.
func (p *Pool) scale() {
	ps := p.poolState()
	d := decide(ps, p.cfg.limits(), p.ramp)
	p.ramp = d.Ramp
	p.stats.AtMax = d.AtMax
	p.settled = d == scaleDecision{Ramp: 1}
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

// poolState counts the current generation for the scaler.
func (p *Pool) poolState() scaleState {
	var ps scaleState
	for _, s := range p.slots {
		if !s.counts(p.gen) {
			continue
		}
		ps.Children++
		if s.state.spare() {
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
// A queue the master cannot accept from for want of its own fds is no
// demand: more children would only take more of them.
func (p *Pool) queued() int {
	hc := p.mode.holdCounts()
	n := hc.ready // held, ready, no idle child yet
	if hc.noFDs {
		return n
	}
	for _, l := range p.listeners {
		n += max(l.queue-l.orders, 0)
	}
	return n
}

// measureQueues reads every listener's accept-queue length once per tick,
// for the scaler and the stuck check.
func (p *Pool) measureQueues() {
	for _, l := range p.listeners {
		q, ok := queueDepth(l.FD)
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
		if (s.state == idle || s.state == standby) && s.gen != p.gen && !s.ending() {
			p.retire(s, "old generation")
		}
	}
}

// checkStuck notes a listener whose connections wait while children are idle
// and nothing gets accepted between two ticks: the pool does not work.
func (p *Pool) checkStuck() {
	stuck := false
	if p.idle.len() > 0 && p.stop == nil {
		for _, l := range p.listeners {
			if l.queue > 0 && p.stats.Served == p.stats.servedAtTick {
				stuck = true
			}
		}
	}
	if hc := p.mode.holdCounts(); hc.full || hc.noFDs {
		stuck = false // the kernel queues what the master, full or out of fds, will not hold: not the pool's fault
	}
	p.stats.Stuck = stuck && p.stats.stuckTicks > 0
	if stuck {
		p.stats.stuckTicks++
	} else {
		p.stats.stuckTicks = 0
	}
	p.stats.servedAtTick = p.stats.Served
}

// setPingAfter decides how long a child must have been silent for this
// tick to ping it: PingInterval; but once one child is due, every idle
// child silent for half of it is pinged with it, so the children's pings
// fall into one tick (and their pongs into the next) instead of one tick
// each (quiet.go).
func (p *Pool) setPingAfter() {
	p.pingAfter = p.cfg.PingInterval
	for _, s := range p.slots {
		if (s.state == idle || s.state == standby) && s.pingSentAt.IsZero() && p.now.Sub(s.heard) >= p.cfg.PingInterval {
			p.pingAfter = p.cfg.PingInterval / 2
			return
		}
	}
}
