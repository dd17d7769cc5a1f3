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
	if p.stop != nil || !p.scaler.settled || p.backoff.failures > 0 || p.scaler.replace > 0 ||
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

// quietUntil returns when the next ping of an idle child among slots is
// due, or its answer, at most cfg's PingInterval from now (a tick period
// if that is longer). It reads no clock.
func quietUntil(slots []*slot, now time.Time, cfg Config) time.Time {
	next := now.Add(max(cfg.PingInterval, cfg.tickPeriod()))
	for _, s := range slots {
		if s.state != idle {
			continue
		}
		due := s.heard.Add(cfg.PingInterval)
		if !s.pingSentAt.IsZero() {
			due = s.pingSentAt.Add(cfg.PingTimeout)
		}
		if due.Before(next) {
			next = due
		}
	}
	return next.Add(time.Millisecond) // past the due time, so the tick acts on it
}

// pacing is when the loop's next tick is due, and whether the pool was
// quiet at the last tick and put it off (hushed), with nothing moved since.
type pacing struct {
	next   time.Time
	hushed bool
}

// every makes the next tick period after now, not hushed.
func (pc *pacing) every(now time.Time, period time.Duration) {
	pc.next, pc.hushed = now.Add(period), false
}

// hush puts the next tick off to until, hushed, if that is later; else it
// does nothing.
func (pc *pacing) hush(until time.Time) bool {
	if !until.After(pc.next) {
		return false
	}
	pc.next, pc.hushed = until, true
	return true
}

// wake brings the next tick within period of now: the pool moved. Unless
// hushed, the next tick is that close already: one test per step.
func (pc *pacing) wake(now time.Time, period time.Duration) {
	if !pc.hushed {
		return
	}
	pc.hushed = false
	if next := now.Add(period); next.Before(pc.next) {
		pc.next = next
	}
}
