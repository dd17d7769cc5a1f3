package prefork

import (
	"github.com/actd/actd/protocol"
)

// Children first under an accept filter. A child that announced
// protocol.CapScreen accepts by itself, as in exclusive mode, applies the
// filter's rule to what it accepted, serves what is ready and gives the
// master the rest (Keep, value protocol.NotReady), which the master holds
// and hands over as in handoff.go. A ready connection so never reaches the
// master: its cost is the exclusive mode's.
//
// The registration follows exclusive.go: a screening child registers its
// listeners (EPOLLEXCLUSIVE) when the master says so (Accept), one child at
// a time, lowest slot first, and registers again (moves to the back of the
// wait queue) when a lower slot registered after it. Unlike exclusive
// mode, a screening child is idle to the master from its first Idle on,
// registered or not: it takes connections handed over (Conn) all along.
// Its registration orders use the exclusive states moving and movingBusy:
// idle --A--> moving --I--> idle, registered.
//
// Children that do not screen (a worker of revision 3) take only what the
// master hands over; while one lives, the master accepts for them
// (handoffMode.accepts).

// childKind is what a child said it does under a filter, at its hello.
type childKind uint8

const (
	unknownKind childKind = iota // no hello yet
	handsOnly                    // takes Conn only: the master accepts for it
	screens                      // accepts by itself (CapScreen)
)

// screening keeps the screening children's registrations in slot order
// (register.go), and counts the children of each kind.
type screening struct {
	p     *Pool
	kinds []childKind // by slot
	reg   []bool      // by slot: registered its listeners
	order order
	plain int // live children that take Conn only
}

func newScreening(p *Pool) screening { return screening{p: p, order: newOrder()} }

// screenRules are the transitions a screening child adds to the handoff
// table: registration orders, connections it accepted itself (reported as
// in exclusive mode) and Keep from any state.
var screenRules = []rule{
	{[]state{idle}, evOrder, moving}, // register (again)
	{[]state{moving}, evIdle, idle},  // registered
	{[]state{moving}, evBusy, movingBusy},
	{[]state{movingBusy}, evIdle, moving},
	{[]state{idle}, evBusy, busy},
	{[]state{idle, ordered, moving}, evServed, stay},
	{[]state{idle, ordered, moving, movingBusy}, evKeep, stay},
}

// moved follows slot s's transitions: it counts the kinds at hello and
// exit, and tells the next child to register.
func (c *screening) moved(s *slot, from, to state, ev event) {
	switch {
	case ev == evSpawn:
		c.set(s.num, unknownKind)
		c.order.check = true
	case ev == evHello:
		c.hello(s)
	case to == exiting:
		c.gone(s)
	case from == moving && to == idle:
		c.grow(s.num)
		c.reg[s.num] = true
		c.order.registered(c.p, s, c)
	case from == moving && to == movingBusy:
		c.order.done(s) // it registers once that connection is done; another may meanwhile
	case ev == evBusy || ev == evServed || ev == evPong || ev == evRequest || ev == evKeep:
		return // nobody can register now who could not before
	}
	c.order.next(c.p, c)
}

// hello notes what child s does.
func (c *screening) hello(s *slot) {
	k := handsOnly
	if s.caps.Has(protocol.CapHandoff | protocol.CapScreen) {
		k = screens
	}
	c.set(s.num, k)
	if k == handsOnly {
		c.plain++
	}
}

// gone forgets child s, whose back-channel closed.
func (c *screening) gone(s *slot) {
	if c.kind(s.num) == handsOnly {
		c.plain--
	}
	c.set(s.num, unknownKind)
	c.order.done(s)
	c.order.check = true
}

// mustRegister: s screens and has not registered, or is behind a lower
// slot.
func (c *screening) mustRegister(s *slot) bool {
	return c.kind(s.num) == screens && (!c.registered(s.num) || c.order.isBehind(s.num))
}

// tellable: s is idle (a screening child idles unregistered too).
func (c *screening) tellable(s *slot) bool { return s.state == idle }

// inQueue: s registered its listeners.
func (c *screening) inQueue(s *slot) bool { return c.registered(s.num) }

func (c *screening) kind(n int) childKind {
	if n < len(c.kinds) {
		return c.kinds[n]
	}
	return unknownKind
}

func (c *screening) registered(n int) bool { return n < len(c.reg) && c.reg[n] }

// set gives slot n its kind, not registered.
func (c *screening) set(n int, k childKind) {
	c.grow(n)
	c.kinds[n], c.reg[n] = k, false
	c.order.setBehind(n, false)
}

// grow makes room for slot n.
func (c *screening) grow(n int) {
	for len(c.kinds) <= n {
		c.kinds, c.reg = append(c.kinds, unknownKind), append(c.reg, false)
	}
}
