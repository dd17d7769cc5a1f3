package prefork

import (
	"time"

	"github.com/actd/actd/protocol"
)

// The per-connection path in dispatch mode, top to bottom:
//
//  1. dispatch: a listener is readable. Ask how many connections wait
//     (TCP_INFO) and order that many idle children, lowest slot first.
//  2. order: send A to the child; the slot leaves the idle set.
//  3. The child accepts and answers B (busy) or, if another took the
//     connection, I (idle): onBusy / onIdle in channel.go resolve the order.
//  4. After a connection the child sends I and rejoins the idle set.
//
// When more connections wait than there are idle children, the order says
// KeepAccepting: the child accepts the next waiting connections by itself
// (a batch at most) before its I, reporting them as exclusive-mode children
// do (B for one that lasts, S counting short ones). A saturated pool so
// serves its queue without a round trip through the master per connection.
// Such accepts take connections no order was sent for, so an order may find
// none: the child answers I, and the master looks at the queue again.
//
// The master never blocks on a child: it only counts outstanding orders, and
// never has more of them on a listener than connections wait there.
//
// A TCP listener is watched edge-triggered: epoll reports each arrival once
// and the queue length (TCP_INFO) says how many wait, so the listener stays
// registered as it is and costs no epoll_ctl per connection; it is not
// watched only while no child is idle. The master looks at the queue again,
// without an event, when an order may have left a connection uncovered (see
// resolveOrder) and when a child is idle again after connections waited for
// one. Other listeners (unix sockets) do not
// tell their queue length: they are watched level-triggered, with one order
// at a time, and not watched while that order is out or no child is idle,
// so the level-triggered epoll cannot spin.

// dispatch orders idle children to accept the connections waiting on l.
func (p *Pool) dispatch(l *listener) {
	if p.stop != nil {
		return
	}
	p.harvestOnce() // who is idle, which orders are answered
	pending := l.pending()
	// An order sent earlier may have been used already, its B not read
	// yet: then a waiting connection has no order. Look again at the next B.
	l.unsure = l.edge && l.orders > 0 && pending > 0
	l.starved = false
	for l.orders < pending {
		n := p.idle.lowest()
		if n < 0 {
			p.overloaded(l)
			return
		}
		// More wait than there are idle children: let this one go on
		// accepting after its connection.
		keep := pending-l.orders > p.idle.len() && p.slots[n].roomFor(protocol.KeepAcceptingBatch)
		p.order(p.slots[n], l, keep)
	}
	p.arm(l, l.edge) // an edge-triggered listener is watched again after overload
}

// order tells slot s to accept one connection from l, and with keep set to
// go on accepting while connections wait there (KeepAccepting). A child
// whose back-channel will not take the order is killed.
func (p *Pool) order(s *slot, l *listener, keep bool) {
	p.idle.remove(s.num)
	m := protocol.Message{Type: protocol.Accept, Listener: uint16(l.index)}
	if keep {
		m.Value = protocol.KeepAccepting
		p.stats.KeepOrders++
	}
	if !p.send(s, m) {
		return
	}
	s.setState(ordered, p.now)
	s.listener = l.index
	l.orders++
	p.stats.Orders++
}

// overloadLogEvery bounds the overload log lines: one per period at most.
const overloadLogEvery = 10 * time.Second

// overloaded notes that connections wait and no child is idle. l is not
// watched until the next child to be idle dispatches it again (rearmAll):
// while the pool is saturated, arrivals do not wake the master, and the
// children under KeepAccepting serve the queue.
func (p *Pool) overloaded(l *listener) {
	p.stats.Overloads++
	if p.now.Sub(p.lastOverloadLog) >= overloadLogEvery {
		p.lastOverloadLog = p.now
		p.log.Warn("connections wait, no idle child", "event", "overload", "listener", l.Name,
			"overloads", p.stats.Overloads, "children", p.liveCount(), "max", p.cfg.MaxChildren)
	}
	l.starved = true
	p.arm(l, false)
	p.changedState()
}

// resolveOrder is called when an ordered child answers: took reports a B
// (it accepted a connection), false an I (nothing to accept) or its end.
// An order that took nothing may leave the connection it was sent for
// without one, so the queue is looked at again.
func (p *Pool) resolveOrder(s *slot, took bool) {
	if p.cfg.Mode != protocol.Dispatch {
		return // exclusive mode: the arming order, see arm.go
	}
	l := p.listeners[s.listener]
	l.orders--
	if l.edge && (l.unsure || !took) {
		p.dispatch(l)
		return
	}
	p.rearm(l)
}

// rearm makes sure l's waiting connections get a child once one is idle:
// an edge-triggered listener that found none is dispatched again; a
// level-triggered one is watched again.
func (p *Pool) rearm(l *listener) {
	if p.stop != nil || p.cfg.Mode != protocol.Dispatch || p.idle.len() == 0 {
		return
	}
	if l.edge {
		if l.starved {
			p.dispatch(l)
		}
		return
	}
	if l.armed || l.orders > 0 {
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

// arm starts or stops watching l.
func (p *Pool) arm(l *listener, on bool) {
	if l.armed == on {
		return
	}
	if err := p.poll.arm(l.FD, p.listenEvents(l, on), kindListener, l.index); err != nil {
		p.log.Error("watch listener", "listener", l.Name, "err", err)
		return
	}
	l.armed = on
}

// listenEvents returns the epoll events that watch l, or none.
func (p *Pool) listenEvents(l *listener, on bool) uint32 {
	switch {
	case !on:
		return 0
	case l.edge:
		return eventIn | eventEdge
	}
	return eventIn
}
