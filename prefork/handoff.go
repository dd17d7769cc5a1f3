package prefork

import (
	"fmt"
	"time"

	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// The per-connection path under an accept filter (dispatch mode with
// --accept-filter data or http), top to bottom:
//
//  1. accept: a listener is readable. The master accepts (up to a batch per
//     event) and holds each connection (hold.go): no child yet. It accepts
//     only while a child is idle; with none, the listeners wait unwatched
//     and the next child to go idle accepts (fill).
//  2. look: it peeks at the bytes the client has sent, at once and then at
//     each arrival (the connection is in the loop's epoll set,
//     edge-triggered), until the filter finds it ready; a client that
//     closes is closed, one not ready within --hold-timeout too (http: 408
//     first if some of a request came).
//  3. handOff: the lowest idle child gets the ready connection in a C
//     message (fd attached); the master closes its copy. Parked
//     connections whose next request came with no child idle wait in order
//     for the next idle child: the scaler counts them as demand.
//  4. The child answers B, serves, and sends I; or, between two requests
//     on a keep-alive connection, K with the connection (park), then I. A
//     parked connection is held again, as in 2, and goes to whichever child
//     is idle when its next request is in.
//
// At the hold limit (--max-held, or the fd budget) the master ends the
// oldest held connection that is not ready to take the next (shed.go).
// Children that did not announce protocol.CapHandoff cannot take C: the
// first one's hello abandons its generation, with a *FieldError naming the
// filter (abandon.go: at the first generation that stops the pool).

// acceptBatch bounds the connections accepted per listener event, so one
// busy listener does not hold the loop (it stays readable: level-triggered).
const acceptBatch = 64

// handoffMode is the dispatch accept mode with an accept filter: the master
// accepts, holds and hands over.
type handoffMode struct {
	speaksProtocol
	hold    *holder
	out     *sender   // responses the master finishes (offload.go)
	screen  screening // the children that accept by themselves (screen.go)
	full    bool      // not watching the listeners: MaxHeld held
	stalled bool      // not watching the listeners: out of fds, until the next tick
	starved bool      // not watching the listeners: no idle child, until one is
	quiet   bool      // watching the listeners only to wake a quiet pool (hush)
	nofile  int       // RLIMIT_NOFILE at setup: the fd budget (budget.go)
	shedLog time.Time // when shedding was last logged
}

func (x *handoffMode) table() *table { return filterTable }

// setup watches every listener, level-triggered, and sets the fd budget.
func (x *handoffMode) setup() error {
	x.nofile = fdLimit()
	if n, byFDs := heldBudget(x.p.cfg, len(x.p.listeners), x.nofile); byFDs && x.p.cfg.MaxHeld != 0 {
		x.p.log.Warn("max-held lowered by the fd limit", "event", "budget", "max_held", n,
			"asked", x.p.cfg.MaxHeld, "nofile", x.nofile, "max_children", x.p.cfg.MaxChildren)
	}
	for _, l := range x.p.listeners {
		// Most connections then reach the accept queue with their first
		// bytes: the master hands them over at once instead of watching
		// them (measured: close-8 0.88x plain dispatch without, 0.97x with).
		if err := deferAccept(l.FD, deferHeld); err != nil {
			return err
		}
	}
	return x.p.addListeners(true)
}

// deferHeld is the TCP_DEFER_ACCEPT of a listener the master accepts on:
// a silent connection reaches the master, and its hold timeout, about this
// late.
const deferHeld = time.Second

// readable accepts what waits on l and holds it, while a child is idle to
// take what is ready. With none idle the master stops watching the
// listeners (an overload): a connection accepted then would only wait in
// the master, where a master that dies or is killed takes it along,
// instead of in the socket's queue, which systemd keeps for the next one.
// The next child to go idle accepts again (fill).
func (x *handoffMode) readable(l *listener) {
	if x.p.stop != nil {
		return
	}
	if !x.accepts() { // a connection on a quiet pool whose children screen
		x.quiet = false
		x.watch()
		x.p.pace.wake(x.p.now, x.p.cfg.tickPeriod())
		return
	}
	x.p.harvestOnce() // an I read in this turn makes its child the lowest idle again
	x.accept(l, true)
}

// accept accepts and holds up to a batch of what waits on l, until its
// queue is empty, no child is idle (starve), the budget is held and all
// ready (full), or accept fails with nothing to shed (stalled). At the
// budget it sheds the oldest not ready for each one it takes. readable: l
// was found readable, so a connection waits.
func (x *handoffMode) accept(l *listener, readable bool) {
	p := x.p
	for range acceptBatch {
		if p.idle.len() == 0 {
			x.starve(l, readable)
			return
		}
		fd, peer, err := acceptPeer(l.FD, l.index, p.proxyNets()) // proxyhold.go
		switch {
		case err == unix.EINTR || err == unix.ECONNABORTED:
			continue
		case err == unix.EAGAIN:
			return
		case (err == unix.EMFILE || err == unix.ENFILE) && x.shed("out of file descriptors"):
			continue
		case err != nil:
			p.log.Error("accept", "listener", l.Name, "err", err)
			x.stalled = true
			x.watch()
			return
		}
		readable = false // that one is taken: whether more wait, the queue says
		if !x.room() {
			x.full = true // every one held is ready (a child will take one): hold this one, then stop
			x.watch()
		}
		p.stats.Held++
		i := x.hold.add(fd, l.index, p.now, false)
		x.hold.trustPeer(i, p.proxyNets(), peer, wantHeader)
		x.held(i)
		if x.full {
			return
		}
	}
}

// starve stops watching the listeners for want of an idle child. A
// connection that waits on l (readable: l was found readable with nothing
// taken yet) is an overload now; otherwise fill counts one if it finds a
// connection when a child is idle again: no system call to ask the queue
// per connection of a saturated pool.
func (x *handoffMode) starve(l *listener, readable bool) {
	if readable {
		x.p.overload(l)
	}
	x.starved = true
	x.watch()
}

// fill accepts for the children idle after the master stopped watching
// the listeners for want of one, at once, in the turn that made them
// idle: a saturated pool takes each next connection without watching the
// listeners again. A connection found so waited for a child: an overload.
// Once children stay idle it watches the listeners again.
func (x *handoffMode) fill() {
	for _, l := range x.p.listeners {
		held := x.p.stats.Held
		x.accept(l, false)
		if x.p.stats.Held != held {
			x.p.overload(l)
		}
		if x.p.idle.len() == 0 {
			return // starved again
		}
	}
	x.starved = false // every queue empty, or a batch taken: the listeners say when more comes
	x.watch()
}

// held looks at connection i, now held (accepted or parked).
func (x *handoffMode) held(i int) { x.look(i, false) }

// look hands connection i over if it is ready, closes it if its client
// is gone, and else waits for more bytes. closed: the client closed its
// side, so no more come; a request it sent whole is still handed over (a
// client may half-close after its request), a part of one is closed.
// (A peek cannot tell a close behind bytes still unread.)
func (x *handoffMode) look(i int, closed bool) {
	x.hold.maxLen = int64(x.p.cfg.MaxRequestBody) // bodylimit.go: a reload may change it
	got := x.hold.look(i)
	if got == notYet && closed {
		got = isGone
	}
	switch got {
	case isBadHeader:
		x.proxyFailed(i, "malformed")
		x.close(i)
	case isGone:
		x.p.stats.HeldClosed++
		x.close(i)
	case isReady:
		x.hold.markReady(i)
		x.handOff()
		if x.hold.conns[i].ready { // still held: no child was idle
			x.p.stats.Overloads++
		}
	default:
		x.hold.touch(i, x.p.now, x.p.cfg.HoldTimeout)
		x.poll(i)
	}
}

// heldEvent: bytes arrived on held connection i, or its client closed it.
func (x *handoffMode) heldEvent(i int, closed bool) {
	if i < len(x.hold.conns) && x.hold.conns[i].fd >= 0 && !x.hold.conns[i].ready {
		x.look(i, closed)
	}
}

// poll registers connection i in the loop's set, once.
func (x *handoffMode) poll(i int) {
	c := &x.hold.conns[i]
	if c.polled {
		return
	}
	if err := x.p.poll.add(c.fd, eventIn|eventEdge|unix.EPOLLRDHUP, kindHeld, i); err != nil {
		x.p.log.Error("watch held connection", "err", err)
		x.close(i)
		return
	}
	c.polled = true
}

// handOff gives ready connections to idle children, lowest slot first,
// longest waiting first.
func (x *handoffMode) handOff() {
	p := x.p
	for p.idle.len() > 0 { // also while the pool stops: no child drains before the holder is empty
		if len(x.out.refused) > 0 && x.giveBack() { // a response under way first
			continue
		}
		i := x.hold.nextReady()
		if i < 0 {
			return
		}
		s := p.slots[p.idle.lowest()]
		c := &x.hold.conns[i]
		m := connMessage(s, c)
		var buf [protocol.MessageSize + protocol.MaxAddr]byte
		if err := rawSendFD(s.ch, m.Encode(buf[:]), c.fd); err != nil {
			p.sendFailed(s, m.Type, err) // hangup.go; it stays ready, for the next child
			continue
		}
		x.hold.takeReady()
		p.idle.remove(s.num)
		p.move(s, evHandoff)
		s.listener = c.listener
		p.stats.Handoffs++
		x.close(i)
	}
}

// close stops holding connection i and closes the master's copy (a child
// may have it now).
func (x *handoffMode) close(i int) {
	if x.hold.conns[i].polled {
		x.p.poll.remove(x.hold.conns[i].fd) // a child may hold the same file: epoll would report it still
	}
	rawClose(x.hold.release(i))
	if x.full && x.hold.count+x.out.fds() < x.limit() {
		x.full = false
		x.watch()
	}
}

// park holds fd, given back by slot s (Keep, accepted on listener):
// between two requests, or (notReady) found not ready by a child that
// screens, with the client's address (addr, from a PROXY header) or "".
// While the pool stops it is closed, as an idle connection, unless
// its request is in already and children still take connections.
func (x *handoffMode) park(s *slot, fd, listener int, notReady bool, addr string) {
	p := x.p
	if notReady {
		p.stats.Held++
	} else {
		p.stats.Parked++
	}
	x.room() // if every one held is ready, hold it anyway: it is here
	i := x.hold.add(fd, listener, p.now, !notReady)
	x.hold.conns[i].addr = validAddr(addr)
	if notReady && addr == "" { // given back unread: its header is still due (proxyhold.go)
		x.hold.trust(i, p.proxyNets(), wantHeader)
	}
	if p.stop == nil {
		x.held(i)
		return
	}
	if p.stop.drained || x.hold.look(i) != isReady {
		x.close(i)
		return
	}
	x.hold.markReady(i)
	x.handOff()
}

// accepts reports whether the master accepts connections itself: while a
// child lives that takes only what is handed over. Children that screen
// accept for themselves.
func (x *handoffMode) accepts() bool { return x.screen.plain > 0 }

// watch starts or stops watching the listeners: watched while the master
// accepts, but not while full, stalled or starved; or to wake a quiet pool
// (hush); never once the pool stops.
func (x *handoffMode) watch() {
	x.p.watchListeners((x.accepts() && !x.full && !x.stalled && !x.starved || x.quiet) && x.p.stop == nil)
}

// moved hands ready connections over when a child is idle, accepts for
// it if the listeners wait for one (fill), and abandons the generation of
// a worker that cannot take them at its hello (abandon.go: the first
// generation's stops the pool).
func (x *handoffMode) moved(s *slot, from, to state, ev event) {
	if ev == evHello && !s.caps.Has(protocol.CapHandoff) {
		x.p.unfit(s, errNoHandoff(x.p.cfg, s))
		return
	}
	plain := x.accepts()
	x.screen.moved(s, from, to, ev)
	if x.accepts() != plain {
		x.watch()
	}
	switch {
	case to == idle && from != idle:
		x.handOff()
		if x.starved && x.p.idle.len() > 0 && x.p.stop == nil {
			x.fill()
		}
	}
}

// errNoHandoff is why a generation whose worker cannot take connections
// handed over is abandoned (the first generation's stops the pool).
func errNoHandoff(cfg Config, s *slot) error {
	return &FieldError{Field: "accept-filter", Value: cfg.Filter,
		Allowed: fmt.Sprintf("none for this worker: child %d (pid %d) does not take handed-off connections "+
			"(its hello announces no handoff capability, docs/protocol.md); use --accept-filter none, "+
			"or a worker that supports protocol revision 3 hand-off", s.num, s.pid)}
}

// tick times out held connections, watches the listeners again after a
// stall, and accepts for children idle while the listeners wait for one
// (moved does at once; this is the backstop).
func (x *handoffMode) tick() {
	x.expire()
	x.expireSends()
	x.screen.order.next(x.p, &x.screen)
	if x.stalled {
		x.stalled = false
		x.watch()
	}
	x.handOff()
	if x.starved && x.p.idle.len() > 0 && x.p.stop == nil {
		x.fill()
	}
}

// hush: while the master accepts, the listeners wake the loop already; with
// children that screen, it watches them so that a connection on a quiet
// pool wakes it (the stuck check), as in exclusive mode.
func (x *handoffMode) hush() {
	if !x.accepts() {
		x.quiet = true
		x.watch()
	}
}

// stop stops watching the listeners and closes the held connections that
// are idle: nothing of a request came (silent ones, and parked keep-alive
// connections between two requests), as a server ends idle connections
// when it stops. A connection with a request in, or part of one, still
// goes to a child once ready, or times out: Pool.drainChildren waits for
// it. Called again after the graceful timeout (checkStop), it closes
// everything held.
func (x *handoffMode) stop() {
	x.watch()
	for i := range x.hold.conns {
		c := &x.hold.conns[i]
		if c.fd >= 0 && (!c.ready && c.got == 0 || x.p.stop.killed) {
			x.close(i)
		}
	}
	if x.p.stop.killed {
		x.expireSends() // responses still unsent at the graceful timeout
	}
}

// wantReports: always. A K carries a connection whose client may be
// writing its next request, and a ready connection waits for the next I.
func (x *handoffMode) wantReports() bool { return true }

// takesFDs: children give connections back (Keep).
func (x *handoffMode) takesFDs() bool { return true }

func (x *handoffMode) holdCounts() holdCounts {
	refused := len(x.out.refused) // they wait for a child, as ready ones
	return holdCounts{held: x.hold.count + refused, ready: x.hold.ready + refused, full: x.full, noFDs: x.stalled, sends: x.out.count}
}

// heldInfo describes what is held at now, for a snapshot.
func (x *handoffMode) heldInfo(now time.Time) *HeldInfo {
	h := x.hold
	in := &HeldInfo{Filter: h.filter.String(), Held: h.count, Ready: h.ready, Parked: h.parked, Max: x.limit()}
	if t := h.oldest(); !t.IsZero() {
		in.Oldest = max(now.Sub(t), 0)
	}
	in.Stored, in.StoredTotal, in.StoreFailed = h.stored.now, h.stored.stored, h.stored.failed
	in.Sending, in.SendingBytes, in.SendingLeft, in.Refused = x.out.count, x.out.bytes, x.out.left, len(x.out.refused)
	if t := x.out.oldest(); !t.IsZero() {
		in.SendingOldest = max(now.Sub(t), 0)
	}
	h.bodyInfo(in)
	in.ProxyHeaders, in.ProxyFailed = h.proxy.taken, h.proxy.failed
	return in
}
