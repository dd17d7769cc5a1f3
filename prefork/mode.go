package prefork

import (
	"fmt"
	"time"

	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// acceptMode is how the pool's children come to their connections: one type
// per mode (dispatch.go, handoff.go, exclusive.go, shared.go), chosen once
// by newMode.
// The loop calls it; it calls back into the pool for everything modes
// share (watch.go watches the listeners for each). What most modes do
// alike is embedded: speaksProtocol (scale, drain) and holdsNone. Adding a
// mode is a file with a type like these and a line in newMode.
type acceptMode interface {
	// table returns the mode's slot transitions (machine.go).
	table() *table
	// setup runs once, before the first child starts.
	setup() error
	// readable handles a listener the mode asked the loop to watch.
	readable(l *listener)
	// moved follows every slot transition: s went from from to to along
	// ev, and has had the event's common effects (s may have moved on
	// since, through a nested order).
	moved(s *slot, from, to state, ev event)
	// tick runs once per tick, before the scaler.
	tick()
	// scale applies the scaler's decision for the current generation.
	scale()
	// drain tells s's child to finish and exit.
	drain(s *slot)
	// stop begins the pool's drain: no new connections.
	stop()
	// wantReports reports whether children's messages must wake the loop
	// (reports.go).
	wantReports() bool
	// hush: the pool is quiet until the next tick, seconds away
	// (quiet.go); a connection must still wake the loop.
	hush()
	holding
}

// holding is what the loop asks of a mode about the connections it holds
// in the master: handoffMode (an accept filter in dispatch mode) holds
// them; every other mode embeds holdsNone.
type holding interface {
	// takesFDs reports whether a child's messages may carry a descriptor
	// (Keep): the channels of children that announced handoff are then
	// read with recvmsg.
	takesFDs() bool
	// heldEvent: bytes arrived on held connection i (kindHeld), or its
	// client closed (or half-closed) it: closed.
	heldEvent(i int, closed bool)
	// park takes fd, a connection slot s gave back (Keep), accepted on
	// listener; notReady: found not ready by a child that screens.
	park(s *slot, fd, listener int, notReady bool, addr string)
	// finish takes a connection slot s handed over with the rest of its
	// response (Write, offload.go): connection fd, the data in data. It
	// returns an error wrapping protocol.ErrGarbage for a Write beyond
	// what the master takes; the fds are its own either way.
	finish(s *slot, fd, data int, m protocol.Message) error
	// sendEvent: finishing connection i is writable, or its client gone
	// (kindOffload).
	sendEvent(i int)
	// holdCounts returns what is held now, cheaply, for the tick.
	holdCounts() holdCounts
	// heldInfo describes what is held at now for a snapshot, or returns
	// nil if the mode holds nothing.
	heldInfo(now time.Time) *HeldInfo
}

// holdCounts are a holding mode's connections at one moment.
type holdCounts struct {
	held  int  // held or parked: they time out, so the pool is not quiet
	ready int  // of them, ready with no idle child: the scaler's demand
	full  bool // as many held as the budget allows, all ready: the kernel queues the rest, by design
	noFDs bool // the master is out of fds with nothing to shed: it accepts again at the next tick
	sends int  // responses the master finishes (offload.go): a stopping pool waits for them
}

// speaksProtocol is what a mode whose children speak the protocol (every
// mode but shared) shares: its pool, sized by the scaler, and a child told
// to drain with a D message. Such a mode embeds it, with holdsNone unless
// it holds connections, and reaches its pool as m.p.
type speaksProtocol struct{ p *Pool }

// scale applies the scaler's decision (scale.go).
func (m speaksProtocol) scale() { m.p.scale() }

// drain sends D: s's child finishes its connection and exits.
func (m speaksProtocol) drain(s *slot) { m.p.send(s, protocol.Message{Type: protocol.Drain}) }

// holdsNone is the holding of a mode that holds no connection.
type holdsNone struct{}

func (holdsNone) takesFDs() bool               { return false }
func (holdsNone) heldEvent(int, bool)          {}
func (holdsNone) holdCounts() holdCounts       { return holdCounts{} }
func (holdsNone) heldInfo(time.Time) *HeldInfo { return nil }
func (holdsNone) sendEvent(int)                {}

// finish closes fd and data; it is not reached, as park.
func (holdsNone) finish(_ *slot, fd, data int, _ protocol.Message) error {
	unix.Close(fd)
	unix.Close(data)
	return nil
}

// park closes fd; it is not reached: only filterTable has a Keep
// transition.
func (holdsNone) park(_ *slot, fd, _ int, _ bool, _ string) { unix.Close(fd) }

// newMode returns the acceptMode of cfg.Mode for p. It is the one place the
// mode is decided.
func newMode(p *Pool, m protocol.Mode) (acceptMode, error) {
	switch m {
	case protocol.Dispatch:
		if p.cfg.holds() {
			hold := newHolder(p.cfg.Filter, p.cfg.HoldBody)
			hold.tls = &p.spec.tls  // tlsfds.go: the current generation's
			hold.tally = &p.tallies // tally.go: its 413s count with the children's answers
			return &handoffMode{speaksProtocol: speaksProtocol{p}, hold: hold, screen: newScreening(p), out: &sender{}}, nil
		}
		return &dispatchMode{speaksProtocol: speaksProtocol{p}}, nil
	case protocol.Exclusive:
		return &exclusiveMode{speaksProtocol: speaksProtocol{p}, order: newOrder()}, nil
	case protocol.Shared:
		return &sharedMode{p: p}, nil
	}
	return nil, fmt.Errorf("accept mode %v: unknown", m)
}
