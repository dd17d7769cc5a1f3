package prefork

// tick is the loop's periodic work, in order: read the reports and the
// queues, carry out every live slot's deadlines (deadlines.go) and pings
// (pings.go), then readiness, the mode's and the launcher's periodic work, the
// stuck check (queues.go), the stop or the scaler (scale.go), and whether
// the pool may sleep until its next ping (quiet.go). Its cost grows with the
// pool, but it runs once per tick period, not per connection.
func (p *Pool) tick() {
	p.pace.every(p.now, p.cfg.tickPeriod()) // until quiet says otherwise, below
	p.harvest()
	p.measureQueues()
	p.reports.starting = false
	limits := p.cfg.deadlines(pingAfter(p.slots, p.now, p.cfg.PingInterval))
	for _, s := range p.slots {
		if s.live() {
			p.checkSlot(s, limits)
			p.measure(s)
			p.reports.starting = p.reports.starting || s.state.starting()
		}
	}
	p.gens.ready.check(p)
	p.mode.tick()
	p.launcher.tick()
	p.checkStuck()
	if p.stop != nil {
		p.checkStop()
		return
	}
	if p.scaler.elapsed(p.now, p.cfg.ScalePeriod) {
		p.mode.scale()
	}
	if p.quiet() {
		if p.pace.hush(quietUntil(p.slots, p.now, p.cfg)) {
			p.mode.hush()
		}
	}
}
