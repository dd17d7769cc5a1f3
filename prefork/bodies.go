package prefork

import (
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"golang.org/x/sys/unix"
)

// Bodies held until they are in (--hold-body, the http filter). A held
// connection whose request head is whole and announces a body stays held
// until the body is in, up to the bound (acceptfilter.Await): a
// Content-Length body is counted in the socket's receive queue (FIONREAD)
// without being read, a chunked one is peeked at until its end shows. The
// master still consumes nothing: the child reads the request from its
// first byte. While it waits for a body:
//
//   - the socket's receive buffer is raised (SO_RCVBUF) so that the head
//     and the body up to the bound fit in its queue; the kernel caps it at
//     net.core.rmem_max, and a queue that is full (bodyFull) is ready too,
//     so a client the window stops is never left waiting on the master;
//   - a request with Expect: 100-continue whose body has not begun is
//     answered 100 Continue by the master, once (the workers actd ships
//     send none for a body that has begun);
//   - its hold timeout counts from the last bytes that came: a body still
//     arriving is never cut; one that stalls for --hold-timeout is handed
//     to a child as it is (bodyStalled), which waits on it as it would
//     without the holder.
//
// A body over the bound is handed over once bound bytes of it are in:
// such an upload pins a child for the rest of its time.

// bodyState is what the holder keeps of a body it waits for.
type bodyState struct {
	need    int64 // bytes queued (head included) that make it ready
	queued  int   // bytes queued at the last look
	chunked bool  // peek to see its end
	peek    int   // bytes to peek at, for a chunked one
	buf     int   // the receive buffer the kernel gave (SO_RCVBUF, as read back)
	over    bool  // a Content-Length larger than the bound
	grew    bool  // the last look found more bytes than the one before
}

// bodyCounts are the holder's body counters.
type bodyCounts struct {
	now       int    // connections held for their body now
	bound     uint64 // bodies handed over at the bound (larger than it), in all
	full      uint64 // bodies handed over with the receive queue full before the bound, in all
	stalled   uint64 // bodies handed over after --hold-timeout without bytes, in all
	continued uint64 // 100 Continue answers sent, in all
	tooLarge  uint64 // 413 answers for a Content-Length over --max-request-body, in all (bodylimit.go)
}

// response100 is the master's answer to Expect: 100-continue.
var response100 = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// lookBody applies the body rule to entry i, whose head is whole
// (Ready), peek what the last peek saw (nil for a Content-Length body
// already waited for: it is counted, not peeked at). It returns isReady,
// notYet, or isGone after answering 413 to a Content-Length over maxLen.
func (h *holder) lookBody(i int, peek []byte) look {
	c := &h.conns[i]
	queued := queuedBytes(c.fd, len(peek))
	if b := c.body; b != nil {
		b.grew = queued > b.queued
		b.queued = queued
	}
	if b := c.body; b != nil && !b.chunked {
		if int64(queued) < b.need && !h.full(c, queued) {
			return notYet
		}
		h.bodyIn(c, b.over && int64(queued) >= b.need, queued)
		return isReady
	}
	w := acceptfilter.Await(peek, queued, h.bound)
	if h.overLimit(w) { // bodylimit.go
		h.answer413(c)
		return isGone
	}
	switch {
	case w.Ready:
		h.bodyIn(c, w.Bound, queued)
		return isReady
	case c.body == nil:
		h.waitBody(c, w, queued)
	case h.full(c, queued):
		h.bodyIn(c, false, queued)
		return isReady
	}
	return notYet
}

// waitBody starts holding c for its body.
func (h *holder) waitBody(c *heldConn, w acceptfilter.Wait, queued int) {
	c.body = &bodyState{need: w.Need, queued: queued, chunked: w.Chunked, peek: w.Peek, over: w.Length > h.bound}
	c.body.buf = growRcvbuf(c.fd, int(min(w.Need, 1<<30)))
	h.bodies.now++
	if w.Continue && queued == w.Head {
		if _, err := rawSendNow(c.fd, response100, false); err == nil {
			h.bodies.continued++
		}
	}
}

// bodyIn notes that c's request is ready: its body is in, or bound bytes
// of a larger one (atBound), or its queue is full.
func (h *holder) bodyIn(c *heldConn, atBound bool, queued int) {
	switch {
	case atBound:
		h.bodies.bound++
	case c.body != nil && int64(queued) < c.body.need:
		h.bodies.full++
	}
	h.dropBody(c)
}

// dropBody forgets c's body, if it waited for one.
func (h *holder) dropBody(c *heldConn) {
	if c.body != nil {
		h.bodies.now--
		c.body = nil
	}
}

// full reports whether c's receive queue holds as much as its buffer lets
// the client send (about half of SO_RCVBUF as the kernel reports it, the
// rest being the kernel's overhead): no more can come until a child reads.
func (h *holder) full(c *heldConn, queued int) bool {
	return c.body != nil && c.body.buf > 0 && queued >= c.body.buf/2
}

// bodyPeek returns the buffer to peek at c with: the holder's HeadLimit
// one, or for a chunked body a larger one, grown as the body needs, up to
// HeadLimit plus the bound.
func (h *holder) bodyPeek(c *heldConn) []byte {
	if c.body == nil || !c.body.chunked || c.body.peek <= len(h.peek) {
		return h.peek
	}
	if len(h.big) < c.body.peek {
		h.big = make([]byte, min(c.body.peek, acceptfilter.HeadLimit+int(h.bound)))
	}
	return h.big[:min(c.body.peek, len(h.big))]
}

// touch restarts c's hold timeout when bytes of its body came: the timeout
// counts from the last ones. Entry i moves to the back of its queue; the
// stale place is skipped (seq). It does so at most every eighth of timeout.
func (h *holder) touch(i int, now time.Time, timeout time.Duration) {
	c := &h.conns[i]
	if c.body == nil || !c.body.grew || now.Sub(c.since) < timeout/8 {
		return
	}
	c.since = now
	c.seq++
	if c.parked {
		h.idle.push(heldRef{i, c.seq})
	} else {
		h.fresh.push(heldRef{i, c.seq})
	}
}

// queuedBytes returns the bytes in fd's receive queue (FIONREAD), at least
// peeked (what a peek saw is there).
func queuedBytes(fd, peeked int) int {
	n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	if err != nil {
		return peeked
	}
	return max(n, peeked)
}

// growRcvbuf raises fd's receive buffer so that want bytes fit in its
// queue (SO_RCVBUF; the kernel doubles the value for its overhead, and
// caps it at net.core.rmem_max), never lowering it. It returns the buffer
// as the kernel reports it, 0 if it cannot tell.
func growRcvbuf(fd, want int) int {
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		return 0
	}
	if got/2 >= want {
		return got
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, want) != nil {
		return got
	}
	if got, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF); err != nil {
		return 0
	}
	return got
}

// bodyInfo adds the bodies held to in, for a snapshot.
func (h *holder) bodyInfo(in *HeldInfo) {
	b := h.bodies
	in.Bodies, in.BodyBound, in.BodyFull, in.BodyStalled, in.Continues = b.now, b.bound, b.full, b.stalled, b.continued
	in.TooLarge = b.tooLarge
	if b.now == 0 {
		return
	}
	for i := range h.conns {
		if c := &h.conns[i]; c.fd >= 0 && c.body != nil {
			in.BodyBytes += int64(c.body.queued)
		}
	}
}
