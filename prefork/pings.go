package prefork

import (
	"time"

	"github.com/actd/actd/protocol"
)

// pingAfter returns how long a child must have been silent at now for this
// tick to ping it: interval; but once one idle child is due, every idle
// child silent for half of it is pinged with it, so the children's pings
// fall into one tick (and their pongs into the next) instead of one tick
// each (quiet.go). It reads no clock and changes nothing.
func pingAfter(slots []*slot, now time.Time, interval time.Duration) time.Duration {
	for _, s := range slots {
		if (s.state == idle || s.state == standby) && s.pingSentAt.IsZero() && now.Sub(s.heard) >= interval {
			return interval / 2
		}
	}
	return interval
}

// ping sends slot s the next ping and, if it went out, notes when: its
// answer is then due within PingTimeout (due, deadlines.go).
func (p *Pool) ping(s *slot) {
	s.pingSeq++
	if p.send(s, protocol.Message{Type: protocol.Ping, Value: s.pingSeq}) {
		s.pingSentAt = p.now
	}
}
