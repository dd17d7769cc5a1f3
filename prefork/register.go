package prefork

import (
	"github.com/actd/actd/protocol"
)

// Children that accept by themselves (exclusive mode, and children that
// screen under a filter, screen.go) wait on the listeners with
// EPOLLEXCLUSIVE, and the kernel wakes the one that registered first. So
// that the hot children are the low slots, a child registers when told to
// (an Accept order, answered with Idle once registered), one at a time,
// lowest slot first; a registered child behind a lower slot that came
// after it is told again (it drops its registration and adds it anew, to
// the back of the queue). order keeps that order for both.

// registrant is what order asks a mode about its children.
type registrant interface {
	// mustRegister reports whether s is to be told to register: it has
	// not, or it is registered behind a lower slot (order.behind).
	mustRegister(s *slot) bool
	// tellable reports whether s can be told now; if not, order looks
	// again later.
	tellable(s *slot) bool
	// inQueue reports whether s is registered, or registering.
	inQueue(s *slot) bool
}

// order is the registration order of one mode's children.
type order struct {
	arming int    // the slot told to register, not done yet, or -1
	check  bool   // a slot may need to register: next walks the slots
	behind []bool // by slot: registered, but before a lower slot did
}

func newOrder() order { return order{arming: -1} }

// next tells the lowest child that must register to do so, unless another
// is doing it now. A lower child still starting is waited for. It walks the
// slots only while some may need it (check): a child going idle costs no
// walk of the pool in the steady state.
func (o *order) next(p *Pool, m registrant) {
	if o.arming >= 0 || p.stop != nil || !o.check {
		return
	}
	waiting := false // a child to register is busy: look again later
	for _, s := range p.slots {
		switch {
		case !s.live() || s.ending():
			continue
		case s.state.starting():
			return // a lower slot first: it will be ready soon, or killed
		case !m.mustRegister(s):
			continue
		case !m.tellable(s):
			waiting = true
			continue
		}
		if p.send(s, protocol.Message{Type: protocol.Accept}) {
			o.arming = s.num
			o.setBehind(s.num, false)
			p.move(s, evOrder)
			return
		}
	}
	o.check = waiting
}

// registered notes that child s registered, at the back of the queue:
// every higher slot in the queue is now ahead of it, and is told again.
// That includes one told to register again and not done yet (it may have
// registered already, its I not read yet): it stays behind and is told
// once more.
func (o *order) registered(p *Pool, s *slot, m registrant) {
	o.done(s)
	for _, t := range p.slots[s.num+1:] {
		if m.inQueue(t) && !t.ending() {
			o.setBehind(t.num, true)
			o.check = true
		}
	}
}

// done notes that s no longer registers now (registered, busy first, or
// gone): another may.
func (o *order) done(s *slot) {
	if o.arming == s.num {
		o.arming = -1
	}
}

func (o *order) isBehind(n int) bool { return n < len(o.behind) && o.behind[n] }

func (o *order) setBehind(n int, on bool) {
	for len(o.behind) <= n {
		o.behind = append(o.behind, false)
	}
	o.behind[n] = on
}
