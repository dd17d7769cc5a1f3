package prefork

// In exclusive mode the kernel wakes, of the children waiting with
// EPOLLEXCLUSIVE, the one that registered first. So that the hot children are
// the low slots, as in dispatch mode, a child registers its listeners only
// when told to (an Accept order, answered with Idle once registered), and the
// master tells one child at a time, lowest slot first. A low slot restarted
// later registers behind the others: the order is that of arming, which is
// slot order at start and after every reload.

// armNext tells the lowest child that has not registered its listeners to
// do so, unless another is doing it now. A lower child still starting is
// waited for.
func (p *Pool) armNext() {
	if p.cfg.Mode != Exclusive || p.arming >= 0 || p.stop != nil {
		return
	}
	for _, s := range p.slots {
		switch {
		case !s.live() || s.armed || s.draining || s.killed:
			continue
		case s.state == starting:
			return // a lower slot first: it will be idle soon, or killed
		case s.state != idle:
			continue
		}
		if p.send(s, Message{Type: Accept}) {
			s.setState(ordered, p.now)
			p.arming = s.num
			return
		}
	}
}

// armed notes that the arming child has registered its listeners.
func (p *Pool) armed(s *slot) {
	s.armed = true
	p.arming = -1
}
