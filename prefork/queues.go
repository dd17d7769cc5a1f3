package prefork

// The listeners' accept queues, read once per tick: their depth, the demand
// they put to the scaler, and the stuck check the watchdog reports.

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
