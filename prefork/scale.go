package prefork

// The scaler's mechanism: decide (scaler.go) is the policy; what follows
// counts the current generation for it and carries its decision out,
// starting children through the backoff and retiring idle ones.

// scale applies one scaler decision to the current generation.
func (p *Pool) scale() {
	ps := p.poolState()
	d := p.scaler.decide(ps, p.cfg.limits())
	p.stats.AtMax = d.AtMax
	// A child that died unasked is replaced even if the scaler would not
	// miss it: the pool keeps the size demand gave it.
	want := max(d.Spawn, min(p.scaler.replace, p.cfg.MaxChildren-ps.Children))
	started := 0
	for range p.backoff.allows(p.now, want) {
		if !p.start() {
			break
		}
		started++
	}
	p.scaler.replace = max(p.scaler.replace-started, 0)
	if d.Retire > 0 {
		if n := p.highestIdle(p.gens.cur); n >= 0 {
			p.retire(p.slots[n], "too many idle")
		}
	}
	p.retireOldIdle()
}

// poolState counts the current generation for the scaler.
func (p *Pool) poolState() scaleState {
	var ps scaleState
	for _, s := range p.slots {
		if !s.counts(p.gens.cur) {
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
	if !p.genHasIdle(p.gens.cur) {
		return
	}
	for _, s := range p.slots {
		if (s.state == idle || s.state == standby) && s.gen != p.gens.cur && !s.ending() {
			p.retire(s, "old generation")
		}
	}
}
