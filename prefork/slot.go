package prefork

import (
	"time"
)

// state is where a slot's child is in the protocol.
type state uint8

const (
	empty    state = iota // no child
	starting              // spawned, no hello yet
	idle                  // waiting for an order (or, exclusive, for a connection)
	ordered               // sent an accept order, no answer yet
	busy                  // serving a connection
	running               // shared mode: up, state unknown to the master
	exiting               // back-channel closed, waiting to be reaped
)

// slot is one place in the pool. Slot numbers, not PIDs, order the children:
// the lowest-numbered idle slot is ordered first, so the same children stay hot.
type slot struct {
	num   int
	state state
	pid   int
	pidfd int // -1 when closed
	ch    int // master end of the back-channel, -1 when closed or none
	gen   int // the reload generation that started it

	started    time.Time
	since      time.Time // when state last changed
	heard      time.Time // last message from the child
	listener   int       // listener of an outstanding order or busy connection
	served     uint64    // connections accepted
	limit      uint64    // recycle after this many, 0 = never
	pingSeq    uint32
	pingSentAt time.Time // zero: no ping outstanding

	helloed  bool      // said hello
	armed    bool      // exclusive mode: registered its listeners (arm.go)
	behind   bool      // exclusive mode: registered, but before a lower slot did (arm.go)
	moving   bool      // exclusive mode: told to register again, not yet done
	draining bool      // told to finish and exit
	killed   bool      // SIGKILL sent
	quitAt   time.Time // SIGQUIT sent for a busy timeout (zero: not sent)
	deadline time.Time // draining and not busy: kill if still alive then
	reason   string    // why the master ended it, for the log
}

// letter is the scoreboard letter of s, as in spamd and Apache:
// S starting, I idle, A ordered to accept, B busy, R running (shared mode),
// D draining, K killed, E exiting by itself, . empty.
func (s *slot) letter() byte {
	switch {
	case s.state == empty:
		return '.'
	case s.killed:
		return 'K'
	case s.draining:
		return 'D'
	}
	return ".SIABRE"[s.state]
}

// roomFor reports whether s may accept n more connections before it is
// recycled (--max-conn-per-child).
func (s *slot) roomFor(n uint64) bool { return s.limit == 0 || s.served+n < s.limit }

// live reports whether s has a process that has not been reaped.
func (s *slot) live() bool { return s.state != empty }

// counts reports whether s counts toward the scaler's pool: alive, of the
// current generation, and neither draining nor killed.
func (s *slot) counts(gen int) bool {
	return s.live() && !s.draining && !s.killed && s.gen == gen
}

func (s *slot) setState(st state, now time.Time) {
	s.state, s.since = st, now
}
