package prefork

import (
	"testing"
)

// TestQuietTick: a quiet pool's next tick is when its pongs are due (its
// pings went out at this tick), not a tick period away; a slot that moves
// brings the tick back within the period; a pool with a queue is not quiet.
func TestQuietTick(t *testing.T) {
	p, children, _ := dispatchPool(t, 2)
	p.gens.ready.close(p)
	p.tick()
	period := p.cfg.tickPeriod()
	if got := p.pace.next.Sub(p.now); got < p.cfg.PingTimeout || !p.pace.hushed {
		t.Fatalf("quiet pool: next tick in %v (hushed %v), want the ping timeout %v", got, p.pace.hushed, p.cfg.PingTimeout)
	}
	if got := orders(t, children[0]) + orders(t, children[1]); got != "PP" {
		t.Errorf("pings sent: %q, want one to each child", got)
	}
	dispatcher(p).order(p.slots[0], p.listeners[0], false)
	if got := p.pace.next.Sub(p.now); got > period || p.pace.hushed {
		t.Errorf("after an order: next tick in %v (hushed %v), want at most %v", got, p.pace.hushed, period)
	}

	p, _, addr := dispatchPool(t, 2)
	p.gens.ready.close(p)
	queueUp(t, p, addr, 1, 1)
	p.tick()
	if got := p.pace.next.Sub(p.now); got > period || p.pace.hushed {
		t.Errorf("a connection waits: next tick in %v (hushed %v), want at most %v", got, p.pace.hushed, period)
	}
}
