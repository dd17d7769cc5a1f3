package prefork

import "time"

// An idle pool should not wake its master every tick (issue: an idle master
// woke 9-16 times a second). While the pool is quiet (every child of the
// current generation idle, nothing queued, ordered or starting, the scaler
// content, no start failures, no drain) the next tick is when the first
// ping or ping timeout is due, PingInterval at most. Anything that moves a
// slot (step), a spawn or a reap brings the tick back within tickPeriod.

// quiet reports whether nothing but pings needs the next tick.
func (p *Pool) quiet() bool {
	if p.stop != nil || !p.settled || p.backoff.failures > 0 || p.replace > 0 ||
		!p.gens.started() {
		return false
	}
	if !p.launcher.settled() {
		return false // the launcher has a process starting or ending (a zygote)
	}
	if p.mode.holdCounts().held > 0 {
		return false // held connections time out
	}
	for _, l := range p.listeners {
		if l.queue > 0 || l.orders > 0 || l.starved || l.unsure {
			return false
		}
	}
	for _, s := range p.slots {
		if s.live() && (s.gen != p.gens.cur || s.ending() || s.state != idle && s.state != running) {
			return false
		}
	}
	return true
}

// quietUntil returns when the next ping is due, or its answer, at most
// PingInterval from now.
func (p *Pool) quietUntil() time.Time {
	next := p.now.Add(max(p.cfg.PingInterval, p.tickPeriod()))
	for _, s := range p.slots {
		if s.state != idle {
			continue
		}
		due := s.heard.Add(p.cfg.PingInterval)
		if !s.pingSentAt.IsZero() {
			due = s.pingSentAt.Add(p.cfg.PingTimeout)
		}
		if due.Before(next) {
			next = due
		}
	}
	return next.Add(time.Millisecond) // past the due time, so the tick acts on it
}

// keepTicking brings the next tick within tickPeriod: the pool moved.
// Unless hushed, the next tick is that close already: one test per step.
func (p *Pool) keepTicking() {
	if !p.hushed {
		return
	}
	p.hushed = false
	if next := p.now.Add(p.tickPeriod()); next.Before(p.nextTick) {
		p.nextTick = next
	}
}
