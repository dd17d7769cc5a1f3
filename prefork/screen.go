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

// screening keeps the screening children's registrations in slot order,
// and counts the children of each kind.
type screening struct {
	p      *Pool
	kinds  []childKind // by slot
	reg    []bool      // by slot: registered its listeners
	behind []bool      // by slot: registered, but before a lower slot did
	arming int         // the slot told to register, not done yet, or -1
	check  bool        // a slot may need to register: armNext walks the slots
	plain  int         // live children that take Conn only
}

func newScreening(p *Pool) screening { return screening{p: p, arming: -1} }

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
		c.check = true
	case ev == evHello:
		c.hello(s)
	case to == exiting:
		c.gone(s)
	case from == moving && to == idle:
		c.armed(s)
	case from == moving && to == movingBusy && c.arming == s.num:
		c.arming = -1 // it registers once that connection is done; another may meanwhile
	case ev == evBusy || ev == evServed || ev == evPong || ev == evRequest || ev == evKeep:
		return // nobody can register now who could not before
	}
	c.armNext()
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
	if c.arming == s.num {
		c.arming = -1
	}
	c.check = true
}

// armed notes that child s registered, at the back of the queue: every
// registered higher slot is now ahead of it.
func (c *screening) armed(s *slot) {
	if c.arming == s.num {
		c.arming = -1
	}
	c.grow(s.num)
	c.reg[s.num] = true
	for _, t := range c.p.slots[s.num+1:] {
		if c.registered(t.num) && !t.ending() {
			c.behind[t.num] = true
			c.check = true
		}
	}
}

// armNext tells the lowest screening child that has not registered, or is
// registered behind a lower slot, to register, unless another is doing it
// now. A lower child still starting is waited for.
func (c *screening) armNext() {
	p := c.p
	if c.arming >= 0 || p.stop != nil || !c.check {
		return
	}
	waiting := false // a child to register is busy: look again later
	for _, s := range p.slots {
		switch {
		case !s.live() || s.ending():
			continue
		case s.state.starting():
			return // a lower slot first
		case c.kind(s.num) != screens || c.registered(s.num) && !c.behind[s.num]:
			continue
		case s.state != idle:
			waiting = true
			continue
		}
		if p.send(s, protocol.Message{Type: protocol.Accept}) {
			c.arming = s.num
			c.behind[s.num] = false
			p.move(s, evOrder) // idle → moving
			return
		}
	}
	c.check = waiting
}

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
	c.kinds[n], c.reg[n], c.behind[n] = k, false, false
}

// grow makes room for slot n.
func (c *screening) grow(n int) {
	for len(c.kinds) <= n {
		c.kinds, c.reg, c.behind = append(c.kinds, unknownKind), append(c.reg, false), append(c.behind, false)
	}
}
