package prefork

import "time"

// The per-connection path in dispatch mode, top to bottom:
//
//  1. dispatch: a listener is readable. Ask how many connections wait
//     (TCP_INFO) and order that many idle children, lowest slot first.
//  2. order: send A to the child; the slot leaves the idle set.
//  3. The child accepts and answers B (busy) or, if another took the
//     connection, I (idle): onBusy / onIdle in channel.go resolve the order.
//  4. After a connection the child sends I and rejoins the idle set.
//
// The master never blocks on a child: it only counts outstanding orders, and
// stops watching a listener while every waiting connection has an order or
// no child is idle (so a level-triggered epoll cannot spin).

// dispatch orders idle children to accept the connections waiting on l.
func (p *Pool) dispatch(l *listener) {
	if p.stop != nil {
		return
	}
	pending := l.pending()
	for l.orders < pending {
		n := p.idle.lowest()
		if n < 0 {
			p.overloaded(l)
			return
		}
		p.order(p.slots[n], l)
	}
	p.arm(l, false)
}

// order tells slot s to accept one connection from l. A child whose
// back-channel will not take the order is killed.
func (p *Pool) order(s *slot, l *listener) {
	p.idle.remove(s.num)
	if !p.send(s, Message{Type: Accept, Listener: uint16(l.index)}) {
		return
	}
	s.setState(ordered, p.now)
	s.listener = l.index
	l.orders++
	p.stats.Orders++
}

// overloadLogEvery bounds the overload log lines: one per period at most.
const overloadLogEvery = 10 * time.Second

// overloaded notes that connections wait and no child is idle: the listener
// is not watched until a child is idle again.
func (p *Pool) overloaded(l *listener) {
	p.stats.Overloads++
	if p.now.Sub(p.lastOverloadLog) >= overloadLogEvery {
		p.lastOverloadLog = p.now
		p.log.Warn("connections wait, no idle child", "event", "overload", "listener", l.Name,
			"overloads", p.stats.Overloads, "children", p.liveCount(), "max", p.cfg.MaxChildren)
	}
	p.arm(l, false)
	p.changedState()
}

// resolveOrder is called when an ordered child answers (B or I).
func (p *Pool) resolveOrder(s *slot) {
	if p.cfg.Mode != Dispatch {
		return // exclusive mode: the arming order, see arm.go
	}
	l := p.listeners[s.listener]
	l.orders--
	p.rearm(l)
}

// rearm watches l again if a child could take its next connection.
func (p *Pool) rearm(l *listener) {
	if l.armed || p.stop != nil || p.cfg.Mode != Dispatch || p.idle.len() == 0 {
		return
	}
	if !l.tcp && l.orders > 0 {
		return // without a queue length, one order at a time
	}
	p.arm(l, true)
}

// rearmAll is rearm for every listener, after a child became idle.
func (p *Pool) rearmAll() {
	for _, l := range p.listeners {
		p.rearm(l)
	}
}

func (p *Pool) arm(l *listener, on bool) {
	if l.armed == on {
		return
	}
	if err := p.poll.arm(l.FD, on, kindListener, l.index); err != nil {
		p.log.Error("watch listener", "listener", l.Name, "err", err)
		return
	}
	l.armed = on
}
