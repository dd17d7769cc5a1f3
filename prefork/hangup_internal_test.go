package prefork

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// childEnd is the child's end of a real back-channel given to a slot.
type childEnd struct {
	t  *testing.T
	fd int // -1 once hung up
}

// channelFor gives slot s of p a new real back-channel, and returns the
// child's end. The channel is not in p's reports set (a harvest does not
// read it: the test does) but p has one, as closeChannel needs. The test's
// cleanup closes what is still open of either end.
func channelFor(t *testing.T, p *Pool, s *slot) *childEnd {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.ch >= 0 {
		unix.Close(s.ch)
	}
	s.ch = pair[0]
	c := &childEnd{t: t, fd: pair[1]}
	t.Cleanup(func() {
		if s.ch == pair[0] { // not closed by the pool
			unix.Close(pair[0])
		}
		c.hangUp()
	})
	if p.reports.poll == nil {
		poll, err := newPoller()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(poll.close)
		p.reports.poll = poll
	}
	return c
}

// send writes m from the child's end.
func (c *childEnd) send(m protocol.Message) {
	c.t.Helper()
	var buf [protocol.MaxPacket]byte
	if _, err := unix.Write(c.fd, m.Encode(buf[:])); err != nil {
		c.t.Fatalf("child sends %v: %v", m.Type, err)
	}
}

// hangUp closes the child's end, as the child's exit does.
func (c *childEnd) hangUp() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// lastWords are what a child sends just before it exits: a Tally of three
// requests, and in exclusive mode (from idle) a Served count of two.
func lastWords(mode protocol.Mode) []protocol.Message {
	var t protocol.Tallies
	t.Add(200, time.Millisecond)
	t.Add(200, time.Millisecond)
	t.Add(503, time.Second)
	words := []protocol.Message{{Type: protocol.Tally, Tallies: &t}}
	if mode == protocol.Exclusive {
		words = append(words, protocol.Message{Type: protocol.Served, Value: 2})
	}
	return words
}

// TestHangUpReadToTheEnd: what a child sent just before it exited (its
// last Tally, a Served count) is counted, also where the master wrote to
// the child since the child last read (a ping left unread: Linux then
// fails the master's next read or write once with ECONNRESET, before the
// packets) or writes to it after it hung up (EPIPE). Such a failed write
// kills no one; the end of file closes the channel (hangup.go).
func TestHangUpReadToTheEnd(t *testing.T) {
	for _, mode := range []protocol.Mode{protocol.Dispatch, protocol.Exclusive} {
		for _, tc := range []struct {
			name          string
			unread, after bool // the master pings the child before it hangs up, after
		}{
			{"nothing unread", false, false},
			{"ping unread", true, false},
			{"ping after", false, true},
			{"ping unread, ping after", true, true},
		} {
			t.Run(mode.String()+"/"+tc.name, func(t *testing.T) {
				p := benchPool(2, mode)
				s := p.slots[0]
				child := channelFor(t, p, s)
				if tc.unread && !p.send(s, protocol.Message{Type: protocol.Ping, Value: 1}) {
					t.Fatal("ping before the hang-up not sent")
				}
				for _, m := range lastWords(mode) {
					child.send(m)
				}
				child.hangUp()
				if tc.after && p.send(s, protocol.Message{Type: protocol.Ping, Value: 2}) {
					t.Error("ping after the hang-up: sent, want a failure")
				}
				if s.fate != living || s.ch < 0 || p.idle.has(0) != !tc.after {
					t.Fatalf("before the read: fate %v, channel %d, idle %v; want living, open, %v",
						s.fate, s.ch, p.idle.has(0), !tc.after)
				}
				p.readRest(s) // as reap does; a harvest reads the same way
				r := p.tallies.info()
				if r == nil || r.Total != 3 || r.Codes["503"] != 1 {
					t.Errorf("requests %+v, want 3, one of them 503", r)
				}
				if want := map[protocol.Mode]uint64{protocol.Exclusive: 2}[mode]; s.served != want {
					t.Errorf("served %d, want %d", s.served, want)
				}
				if s.ch >= 0 || s.state != exiting || s.fate != living || p.stats.Garbage != 0 {
					t.Errorf("after the read: channel %d, %v, fate %v, garbage %d; want closed, exiting, living, 0",
						s.ch, s.state, s.fate, p.stats.Garbage)
				}
			})
		}
	}
}

// TestHandoffToHungUpChild: a connection handed to an idle child that hung
// up (its write fails with EPIPE) goes to the next idle child; the first
// is not killed, and its last Tally is counted.
func TestHandoffToHungUpChild(t *testing.T) {
	p, children, addr := handoffPool(t, 2, acceptfilter.HTTP)
	s0 := p.slots[0]
	child := channelFor(t, p, s0)
	child.send(lastWords(protocol.Dispatch)[0])
	child.hangUp()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
	turns(t, p, func() bool { return p.stats.Handoffs == 1 })
	conn, _ := handed(t, children[1])
	conn.Write([]byte("answer\n"))
	if got, _ := bufio.NewReader(c).ReadString('\n'); got != "answer\n" {
		t.Errorf("client read %q, want %q", got, "answer\n")
	}
	if s0.fate != living || s0.ch < 0 || p.idle.has(0) {
		t.Fatalf("slot 0 after the handoff: fate %v, channel %d, idle %v; want living, open, not idle", s0.fate, s0.ch, p.idle.has(0))
	}
	p.readRest(s0)
	if r := p.tallies.info(); r == nil || r.Total != 3 {
		t.Errorf("requests %+v, want 3", r)
	}
}
