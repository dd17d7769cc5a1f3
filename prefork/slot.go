package prefork

import (
	"time"

	"github.com/actd/actd/protocol"
)

// slot is one place in the pool. Slot numbers, not PIDs, order the children:
// the lowest-numbered idle slot is ordered first, so the same children stay hot.
// Where the child is in the protocol is state, changed only by step
// (machine.go); how its life ends is fate.
type slot struct {
	num   int
	state state
	fate  fate
	pid   int
	pidfd int // -1 when closed
	ch    int // master end of the back-channel, -1 when closed or none
	gen   int // the reload generation that started it

	started    time.Time
	helloAt    time.Time // when it said hello (zero: not yet)
	since      time.Time // when state last changed
	heard      time.Time // last message from the child
	listener   int       // listener of an outstanding order or busy connection
	served     uint64    // connections accepted
	limit      uint64    // recycle after this many, 0 = never
	pingSeq    uint32
	pingSentAt time.Time     // zero: no ping outstanding
	caps       protocol.Caps // what its Hello said it understands
	request    string        // what the child said it serves (Request), while busy
	usage      usage         // memory and CPU, as last read (memory.go)

	quitAt   time.Time // SIGQUIT sent for a busy timeout (zero: not sent)
	slowAt   time.Time // since of the busy spell logged as slow (zero: none)
	deadline time.Time // draining and not busy: kill if still alive then
	reason   string    // why the master ended it, for the log
}

// fate is how a slot's child is to end, beside its protocol state.
type fate uint8

const (
	living   fate = iota // nobody asked it to end
	draining             // told to finish and exit
	killed               // SIGKILL sent
)

// letter is the scoreboard letter of s, as in spamd and Apache:
// S starting, I idle, A ordered to accept, B busy, R running (shared mode),
// D draining, K killed, E exiting by itself, . empty.
func (s *slot) letter() byte {
	switch {
	case s.state == empty:
		return '.'
	case s.fate == killed:
		return 'K'
	case s.fate == draining:
		return 'D'
	}
	return s.state.letter()
}

// roomFor reports whether s may accept n more connections before it is
// recycled (--max-conn-per-child).
func (s *slot) roomFor(n uint64) bool { return s.limit == 0 || s.served+n < s.limit }

// live reports whether s has a process that has not been reaped.
func (s *slot) live() bool { return s.state != empty }

// ending reports whether s was told to end, or killed.
func (s *slot) ending() bool { return s.fate != living }

// counts reports whether s counts toward the scaler's pool: alive, of the
// current generation, and neither draining nor killed.
func (s *slot) counts(gen int) bool {
	return s.live() && !s.ending() && s.gen == gen
}
