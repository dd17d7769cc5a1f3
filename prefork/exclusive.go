package prefork

// Exclusive mode: children accept by themselves, registered in slot order
// (register.go). A child told to register again while it serves a
// connection finishes it first: the master may hear B and I for that
// connection before the I that says it has registered again.

// exclusiveMode is the exclusive accept mode: children accept by themselves,
// registered in slot order.
type exclusiveMode struct {
	speaksProtocol
	holdsNone
	order order // the children's registration order (register.go)
}

func (x *exclusiveMode) table() *table { return exclusiveTable }

// setup registers the listeners in the loop's set, unwatched: the master
// watches them only while the pool is quiet (hush). Under the data filter
// the kernel defers their accepts (deferData).
func (x *exclusiveMode) setup() error {
	if err := deferData(x.p.cfg, x.p.listeners); err != nil {
		return err
	}
	return x.p.addListeners(false)
}

// hush watches the listeners: the children accept by themselves, so
// without it the master would not see connections queue on a wedged pool
// (the stuck check) until its next, distant tick.
func (x *exclusiveMode) hush() { x.p.watchListeners(true) }

// readable: a connection arrived on a quiet pool. The master stops
// watching and ticks every tick period again.
func (x *exclusiveMode) readable(*listener) {
	x.p.watchListeners(false)
	x.p.pace.wake(x.p.now, x.p.cfg.tickPeriod())
}

// moved keeps the registrations in slot order as children start, register,
// serve and go.
func (x *exclusiveMode) moved(s *slot, from, to state, ev event) {
	switch {
	case ev == evSpawn:
		x.order.setBehind(s.num, false)
		x.order.check = true // it registers once ready
	case to == idle && (from == ordered || from == moving):
		x.order.registered(x.p, s, x)
	case to == movingBusy && from == moving:
		x.order.done(s) // it registers once that connection is done; another may meanwhile
	case to == exiting:
		x.order.done(s)
	case ev == evBusy || ev == evServed || ev == evPong || ev == evRequest:
		return // a connection, a pong or a report: nobody can register now who could not before
	}
	x.order.next(x.p, x)
}

func (x *exclusiveMode) tick() { x.order.next(x.p, x) }

func (x *exclusiveMode) stop() { x.p.watchListeners(false) }

// wantReports: children's messages wake the loop, but for a quiet pool's
// (hushed): its pongs wait for the tick that checks them, and a connection
// wakes the loop through the listeners (hush).
func (x *exclusiveMode) wantReports() bool { return !x.p.pace.hushed }

// mustRegister: s has not registered its listeners (standby), or is
// registered behind a lower slot.
func (x *exclusiveMode) mustRegister(s *slot) bool {
	return s.state == standby || x.order.isBehind(s.num)
}

// tellable: s waits for its go-ahead, or idles registered.
func (x *exclusiveMode) tellable(s *slot) bool { return s.state == standby || s.state == idle }

// inQueue: s has registered its listeners.
func (x *exclusiveMode) inQueue(s *slot) bool { return registered(s.state) }

// registered reports whether a child in state st has registered its
// listeners.
func registered(st state) bool {
	return st == idle || st == busy || st == moving || st == movingBusy
}
