package prefork

import (
	"github.com/actd/actd/protocol"
)

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

// exclusiveMode is the exclusive accept mode: children accept by themselves,
// registered in slot order.
type exclusiveMode struct {
	holdsNone
	p        *Pool
	arming   int    // the slot told to register, not done yet, or -1
	armCheck bool   // a slot may need to register: armNext walks the slots
	behind   []bool // by slot: registered, but before a lower slot did
}

func (x *exclusiveMode) table() *table { return exclusiveTable }

// setup registers the listeners in the loop's set, unwatched: the master
// watches them only while the pool is quiet (hush). Under the data filter
// the kernel defers their accepts (deferData).
func (x *exclusiveMode) setup() error {
	if err := deferData(x.p.cfg, x.p.listeners); err != nil {
		return err
	}
	for _, l := range x.p.listeners {
		if err := x.p.poll.add(l.FD, 0, kindListener, l.index); err != nil {
			return err
		}
	}
	return nil
}

// hush watches the listeners: the children accept by themselves, so
// without it the master would not see connections queue on a wedged pool
// (the stuck check) until its next, distant tick.
func (x *exclusiveMode) hush() { x.watch(true) }

// readable: a connection arrived on a quiet pool. The master stops
// watching and ticks every tick period again.
func (x *exclusiveMode) readable(*listener) {
	x.watch(false)
	x.p.keepTicking()
}

func (x *exclusiveMode) watch(on bool) {
	var events uint32
	if on {
		events = eventIn
	}
	for _, l := range x.p.listeners {
		if l.armed == on {
			continue
		}
		if err := x.p.poll.arm(l.FD, events, kindListener, l.index); err != nil {
			x.p.log.Error("watch listener", "listener", l.Name, "err", err)
			continue
		}
		l.armed = on
	}
}

// moved keeps the registrations in slot order as children start, register,
// serve and go.
func (x *exclusiveMode) moved(s *slot, from, to state, ev event) {
	switch {
	case ev == evSpawn:
		x.setBehind(s.num, false)
		x.armCheck = true // it registers once ready
	case to == idle && (from == ordered || from == moving):
		x.armed(s)
	case to == movingBusy && from == moving:
		x.movingBusy(s)
	case to == exiting && x.arming == s.num:
		x.arming = -1
	case ev == evBusy || ev == evServed || ev == evPong || ev == evRequest:
		return // a connection, a pong or a report: nobody can register now who could not before
	}
	x.armNext()
}

func (x *exclusiveMode) tick() { x.armNext() }

func (x *exclusiveMode) scale() { x.p.scale() }

func (x *exclusiveMode) drain(s *slot) { x.p.send(s, protocol.Message{Type: protocol.Drain}) }

func (x *exclusiveMode) stop() { x.watch(false) }

// wantReports: children's messages wake the loop, but for a quiet pool's
// (hushed): its pongs wait for the tick that checks them, and a connection
// wakes the loop through the listeners (hush).
func (x *exclusiveMode) wantReports() bool { return !x.p.hushed }

// armNext tells the lowest child that has not registered its listeners, or
// is registered behind a lower slot, to register, unless another is doing it
// now. A lower child still starting is waited for. It walks the slots only
// while some may need it (armCheck): a child going idle costs no walk of
// the pool in the steady state.
func (x *exclusiveMode) armNext() {
	p := x.p
	if x.arming >= 0 || p.stop != nil || !x.armCheck {
		return
	}
	waiting := false // a child to register is busy: look again later
	for _, s := range p.slots {
		switch {
		case !s.live() || s.ending():
			continue
		case s.state.starting():
			return // a lower slot first: it will be ready soon, or killed
		case s.state != standby && !x.isBehind(s.num):
			continue // registered in order, or registering now
		case s.state != standby && s.state != idle:
			waiting = true
			continue
		}
		if p.send(s, protocol.Message{Type: protocol.Accept}) {
			x.arming = s.num
			x.setBehind(s.num, false)
			p.move(s, evOrder) // standby → ordered, idle → moving
			return
		}
	}
	x.armCheck = waiting
}

// armed notes that child s has registered its listeners, at the back of the
// queue: every registered higher slot is now ahead of it. That includes one
// told to register again and not done yet (it may have registered already, its
// I not read yet): it stays behind and is told once more.
func (x *exclusiveMode) armed(s *slot) {
	if x.arming == s.num {
		x.arming = -1
	}
	for _, t := range x.p.slots[s.num+1:] {
		if registered(t.state) && !t.ending() {
			x.setBehind(t.num, true)
			x.armCheck = true
		}
	}
}

// registered reports whether a child in state st has registered its
// listeners.
func registered(st state) bool {
	return st == idle || st == busy || st == moving || st == movingBusy
}

// movingBusy notes that a child told to register again accepted a
// connection before it read the order: it registers once that connection is
// done. Another child may register meanwhile.
func (x *exclusiveMode) movingBusy(s *slot) {
	if x.arming == s.num {
		x.arming = -1
	}
}

func (x *exclusiveMode) isBehind(n int) bool { return n < len(x.behind) && x.behind[n] }

func (x *exclusiveMode) setBehind(n int, on bool) {
	for len(x.behind) <= n {
		x.behind = append(x.behind, false)
	}
	x.behind[n] = on
}
