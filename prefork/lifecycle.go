package prefork

import (
	"errors"
	"time"
)

// ErrStopped is returned by calls made after Run has returned.
var ErrStopped = errors.New("pool stopped")

// stopping is the drain that follows the end of Run's context.
type stopping struct {
	deadline time.Time // SIGKILL whatever still runs then
	killed   bool
	drained  bool // the children were told to drain (drainChildren)
}

// beginStop starts the drain that ends Run: no new connections, then the
// children drain (drainChildren).
func (p *Pool) beginStop() {
	p.stop = &stopping{deadline: p.now.Add(p.cfg.GracefulTimeout)}
	p.mode.stop()
	p.launcher.stop(false, "stop")
	if held := p.mode.holdCounts().held; held > 0 {
		p.log.Info("stopping: handing held connections to children first", "event", "stop", "held", held)
	}
	p.drainChildren()
	p.changedState()
}

// drainChildren tells every live child to drain, once the mode holds no
// connection: one the master accepted is the pool's to answer, so the
// children keep taking held connections until each was handed over,
// closed by its client, or timed out (handoff.go). Run's loop calls it on
// every turn of a stop; it drains once.
func (p *Pool) drainChildren() {
	if p.stop == nil || p.stop.drained || p.mode.holdCounts().held > 0 {
		return
	}
	p.stop.drained = true
	for _, s := range p.slots {
		if s.live() {
			p.retire(s, "stop")
		}
	}
	p.log.Info("stopping: draining children", "event", "stop", "children", p.liveCount())
	p.changedState()
}

// checkStop kills what outlives the graceful timeout, and closes what the
// mode still holds.
func (p *Pool) checkStop() {
	if p.stop.killed || p.now.Before(p.stop.deadline) {
		return
	}
	p.stop.killed = true
	p.killAll("graceful timeout")
	p.mode.stop()
}

func (p *Pool) killAll(why string) {
	p.launcher.stop(true, why)
	for _, s := range p.slots {
		if s.live() && s.fate != killed {
			p.kill(s, "stop", why)
		}
	}
}

// Done returns a channel closed when Run has returned.
func (p *Pool) Done() <-chan struct{} { return p.done }
