package prefork

import (
	"fmt"

	"github.com/actd/actd/protocol"
)

// acceptMode is how the pool's children come to their connections: one type
// per mode (dispatch.go, exclusive.go, shared.go), chosen once by newMode.
// The loop calls it; it calls back into the pool for everything modes
// share. Adding a mode is a file with a type like these and a line in
// newMode.
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
}

// newMode returns the acceptMode of cfg.Mode for p. It is the one place the
// mode is decided.
func newMode(p *Pool, m protocol.Mode) (acceptMode, error) {
	switch m {
	case protocol.Dispatch:
		if p.cfg.holds() {
			p.handoff = &handoffMode{p: p, hold: newHolder(p.cfg.Filter)}
			return p.handoff, nil
		}
		return &dispatchMode{p: p}, nil
	case protocol.Exclusive:
		return &exclusiveMode{p: p, arming: -1}, nil
	case protocol.Shared:
		return &sharedMode{p: p}, nil
	}
	return nil, fmt.Errorf("accept mode %v: unknown", m)
}
