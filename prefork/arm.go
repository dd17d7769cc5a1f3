package prefork

import "github.com/actd/actd/protocol"

// In exclusive mode the kernel wakes, of the children waiting with
// EPOLLEXCLUSIVE, the one that registered first: a listener's wait queue
// is in order of registration. So that the hot children are the low slots,
// as in dispatch mode, a child registers its listeners only when told to (an
// Accept order, answered with Idle once registered), and the master tells
// one child at a time, lowest slot first.
//
// A slot that starts later than higher ones (a crash, a recycle) registers
// behind them. The higher ones are then told to register again (the same
// Accept order: the child drops its registration and adds it anew, so it
// moves to the back of the queue), one at a time in slot order, which puts
// the queue back in slot order. A child told so while it serves a
// connection finishes it first: the master may hear B and I for that
// connection before the I that says it has registered again.

// armNext tells the lowest child that has not registered its listeners, or
// is registered behind a lower slot, to register, unless another is doing it
// now. A lower child still starting is waited for. It walks the slots only
// while some may need it (armCheck): a child going idle costs no walk of
// the pool in the steady state.
func (p *Pool) armNext() {
	if p.cfg.Mode != protocol.Exclusive || p.arming >= 0 || p.stop != nil || !p.armCheck {
		return
	}
	waiting := false // a child to register is busy: look again later
	for _, s := range p.slots {
		switch {
		case !s.live() || s.armed && !s.behind || s.draining || s.killed:
			continue
		case s.state == starting:
			return // a lower slot first: it will be idle soon, or killed
		case s.state != idle:
			waiting = true
			continue
		}
		p.idle.remove(s.num) // a child registered behind is accepting: it is in the set
		if p.send(s, protocol.Message{Type: protocol.Accept}) {
			s.setState(ordered, p.now)
			s.moving, s.behind = s.armed, false
			p.arming = s.num
			return
		}
	}
	p.armCheck = waiting
}

// armed notes that child s has registered its listeners, at the back of the
// queue: every registered higher slot is now ahead of it. That includes one
// told to register again and not done yet (it may have registered already, its
// I not read yet): it stays behind and is told once more.
func (p *Pool) armed(s *slot) {
	if p.arming == s.num {
		p.arming = -1
	}
	s.armed, s.moving = true, false
	for _, t := range p.slots[s.num+1:] {
		if t.armed && t.live() && !t.draining && !t.killed {
			t.behind = true
			p.armCheck = true
		}
	}
}

// movingBusy notes that a child told to register again accepted a
// connection before it read the order: it registers once that connection is
// done. Another child may register meanwhile.
func (p *Pool) movingBusy(s *slot) {
	if p.arming == s.num {
		p.arming = -1
		defer p.armNext()
	}
}
