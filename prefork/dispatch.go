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

// dispatchMode is the dispatch accept mode: the master orders.
type dispatchMode struct {
	speaksProtocol
	holdsNone
}

func (d *dispatchMode) table() *table { return dispatchTable }

// setup watches every listener, TCP ones edge-triggered.
func (d *dispatchMode) setup() error {
	for _, l := range d.p.listeners {
		l.edge = l.tcp
	}
	return d.p.addListeners(true)
}

func (d *dispatchMode) readable(l *listener) { d.dispatch(l) }

// moved looks at the listeners again when a child is idle, and resolves an
// order when its child answers or goes. The idle child may take a new order
// at once (rearmAll): the old one is resolved all the same.
func (d *dispatchMode) moved(s *slot, from, to state, ev event) {
	if to == idle && from != idle {
		d.rearmAll()
	}
	if from == ordered && to != ordered {
		d.resolveOrder(s, to == busy)
	}
}

func (d *dispatchMode) tick() {}

// hush: the listeners wake the loop already.
func (d *dispatchMode) hush() {}

// stop stops watching the listeners.
func (d *dispatchMode) stop() { d.p.watchListeners(false) }

// wantReports: children's messages wake the loop only while a connection
// waits for them (reports.go).
func (d *dispatchMode) wantReports() bool {
	if d.p.stop != nil || d.p.reports.starting {
		return true
	}
	for _, l := range d.p.listeners {
		if l.unsure || l.starved || !l.edge && l.orders > 0 {
			return true
		}
	}
	return false
}

// dispatch orders idle children to accept the connections waiting on l.
func (d *dispatchMode) dispatch(l *listener) {
	p := d.p
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
			d.overloaded(l)
			return
		}
		// More wait than there are idle children: let this one go on
		// accepting after its connection, if it has the room for a batch
		// (--max-conn-per-child, --max-child-memory).
		keep := pending-l.orders > p.idle.len() && p.slots[n].roomFor(protocol.KeepAcceptingBatch) &&
			p.mem.room(p.slots[n], protocol.KeepAcceptingBatch)
		d.order(p.slots[n], l, keep)
	}
	d.p.watchListener(l, l.edge) // an edge-triggered listener is watched again after overload
}

// order tells slot s to accept one connection from l, and with keep set to
// go on accepting while connections wait there (KeepAccepting). A child
// whose back-channel will not take the order is killed.
func (d *dispatchMode) order(s *slot, l *listener, keep bool) {
	p := d.p
	p.idle.remove(s.num)
	m := protocol.Message{Type: protocol.Accept, Listener: uint16(l.index)}
	if keep {
		m.Value = protocol.KeepAccepting
		p.stats.KeepOrders++
	}
	if !p.send(s, m) {
		return
	}
	p.move(s, evOrder)
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
func (d *dispatchMode) overloaded(l *listener) {
	d.p.overload(l)
	l.starved = true
	d.p.watchListener(l, false)
	d.p.changedState()
}

// overload counts a connection waiting on l with no idle child, and logs
// it now and then.
func (p *Pool) overload(l *listener) {
	p.stats.Overloads++
	// While children start (a cold start, a burst the scaler answers) a
	// wait is expected: not a warning.
	if !p.reports.starting && p.scaler.warn(p.now, overloadLogEvery) {
		p.log.Warn("connections wait, no idle child", "event", "overload", "listener", l.Name,
			"overloads", p.stats.Overloads, "children", p.liveCount(), "max", p.cfg.MaxChildren)
	}
}

// resolveOrder is called when an ordered child answers: took reports a B
// (it accepted a connection), false an I (nothing to accept) or its end.
// An order that took nothing may leave the connection it was sent for
// without one, so the queue is looked at again.
func (d *dispatchMode) resolveOrder(s *slot, took bool) {
	l := d.p.listeners[s.listener]
	l.orders--
	if l.edge && (l.unsure || !took) {
		d.dispatch(l)
		return
	}
	d.rearm(l)
}

// rearm makes sure l's waiting connections get a child once one is idle:
// an edge-triggered listener that found none is dispatched again; a
// level-triggered one is watched again.
func (d *dispatchMode) rearm(l *listener) {
	if d.p.stop != nil || d.p.idle.len() == 0 {
		return
	}
	if l.edge {
		if l.starved {
			d.dispatch(l)
		}
		return
	}
	if l.armed || l.orders > 0 {
		return // without a queue length, one order at a time
	}
	d.p.watchListener(l, true)
}

// rearmAll is rearm for every listener, after a child became idle.
func (d *dispatchMode) rearmAll() {
	for _, l := range d.p.listeners {
		d.rearm(l)
	}
}
