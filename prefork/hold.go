package prefork

import (
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"golang.org/x/sys/unix"
)

// The holder keeps the connections the master holds under an accept filter
// (handoff.go): accepted and not ready yet, ready and waiting for an idle
// child, or given back by a child between two requests (parked). Each is an
// entry in one table, its fd in the loop's epoll set (edge-triggered: each
// arrival of bytes is one event) while it is not ready. No goroutine or
// timer per connection: the hold timeout walks two queues in order of age
// (fresh connections, parked ones), entries that left them are skipped
// where they are met (a sequence number tells a reused entry). The same
// queues say which connection to shed when the master may hold no more:
// the oldest fresh one that is not ready, else the oldest parked one.

// heldConn is one held connection.
type heldConn struct {
	fd       int // -1: a free entry
	listener int
	since    time.Time  // accepted, or parked
	seq      uint32     // bumped each time the entry is freed
	got      int        // bytes the last look saw
	ready    bool       // in the ready queue
	parked   bool       // given back by a child (Keep), not ready yet
	polled   bool       // registered in the loop's epoll set
	stored   string     // its name in the store (store.go), "" if not stored
	body     *bodyState // its head is in: the body it waits for (bodies.go), or nil

	// Under --proxy-protocol-from (proxyhold.go):
	addr   string      // the client's address from a PROXY header, "" for the socket's peer
	header headerState // whether its PROXY header is still due
}

// heldRef names an entry in a queue; seq tells whether it is still the same
// connection.
type heldRef struct {
	index int
	seq   uint32
}

// refQueue is a first-in first-out queue of entries.
type refQueue struct {
	refs []heldRef
	head int
}

func (q *refQueue) push(r heldRef) { q.refs = append(q.refs, r) }

// front returns the first entry, false if the queue is empty.
func (q *refQueue) front() (heldRef, bool) {
	if q.head == len(q.refs) {
		return heldRef{}, false
	}
	return q.refs[q.head], true
}

// pop drops the first entry, and the room of the dropped ones once they are
// half the queue.
func (q *refQueue) pop() {
	q.head++
	if q.head == len(q.refs) {
		q.refs, q.head = q.refs[:0], 0
	} else if q.head > 64 && q.head*2 > len(q.refs) {
		q.refs = append(q.refs[:0], q.refs[q.head:]...)
		q.head = 0
	}
}

// holder is the table of held connections.
type holder struct {
	filter acceptfilter.Filter
	conns  []heldConn
	free   []int
	count  int         // held now: waiting, ready and parked
	parked int         // of them, parked
	ready  int         // of them, ready for a child
	fresh  refQueue    // accepted (or given back not ready), in order of age
	idle   refQueue    // parked, in order of age
	queue  refQueue    // ready ones, in the order they became ready
	peek   []byte      // acceptfilter.HeadLimit bytes, for every look
	big    []byte      // for chunked bodies: up to HeadLimit + bound bytes, made at the first (bodies.go)
	bound  int64       // --hold-body: the most bytes of body held (http); 0: none
	maxLen int64       // --max-request-body: a Content-Length over it is answered 413 (bodylimit.go); 0: none
	bodies bodyCounts  // bodies held (bodies.go)
	store  Store       // where held connections outlive the master (store.go)
	stored storeCounts // the store's counters
	tls    *tlsFiles   // which listeners terminate TLS: their rule is acceptfilter.HelloReady (tlsfds.go)
	proxy  proxyHeld   // PROXY headers read and refused (proxyhold.go)
	tally  *tallies    // the pool's request counts, or nil: its own answers count there (tally.go)
}

// newHolder returns an empty holder for filter f, holding bodies of up to
// bound bytes (http only).
func newHolder(f acceptfilter.Filter, bound uint64) *holder {
	h := &holder{filter: f, peek: make([]byte, acceptfilter.HeadLimit)}
	if f == acceptfilter.HTTP {
		h.bound = int64(bound)
	}
	return h
}

// add holds fd, accepted on listener (or parked: given back) at now, and
// returns its entry.
func (h *holder) add(fd, listener int, now time.Time, parked bool) int {
	var i int
	if n := len(h.free); n > 0 {
		i, h.free = h.free[n-1], h.free[:n-1]
	} else {
		h.conns = append(h.conns, heldConn{})
		i = len(h.conns) - 1
	}
	c := &h.conns[i]
	c.fd, c.listener, c.since, c.got, c.ready, c.parked, c.polled, c.body = fd, listener, now, 0, false, parked, false, nil
	c.addr, c.header = "", noHeader
	h.count++
	if parked {
		h.parked++
		h.idle.push(heldRef{i, c.seq})
	} else {
		h.fresh.push(heldRef{i, c.seq})
	}
	return i
}

// release forgets entry i and returns its fd, now the caller's.
func (h *holder) release(i int) int {
	h.unkeep(i)
	c := &h.conns[i]
	fd := c.fd
	h.dropBody(c)
	if c.ready {
		h.ready--
	}
	if c.parked {
		h.parked--
	}
	c.fd, c.seq, c.ready, c.parked, c.polled = -1, c.seq+1, false, false, false
	h.count--
	h.free = append(h.free, i)
	return fd
}

// live returns the entry r names, or nil if it has left.
func (h *holder) live(r heldRef) *heldConn {
	c := &h.conns[r.index]
	if c.fd < 0 || c.seq != r.seq {
		return nil
	}
	return c
}

// look is what a look at a held connection found.
type look uint8

const (
	notYet  look = iota // wait for more bytes
	isReady             // hand it to a child
	isGone              // the client closed it, or it failed: close it
)

// look peeks at entry i's bytes (without reading them) and says whether the
// filter finds it ready. One not ready is stored (store.go), once.
func (h *holder) look(i int) look {
	got := h.peekAt(i)
	if got == notYet {
		h.keep(i)
	}
	return got
}

// peekAt is look without the store. A connection whose head is in waits
// for its body (bodies.go): a Content-Length one is counted, not peeked at.
func (h *holder) peekAt(i int) look {
	c := &h.conns[i]
	if c.header != noHeader {
		if got := h.takeHeader(c); got != isReady {
			return got
		}
	}
	if c.body != nil && !c.body.chunked {
		return h.lookBody(i, nil)
	}
	buf := h.bodyPeek(c)
	n, err := rawPeek(c.fd, buf)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return notYet
	case err != nil || n == 0:
		return isGone
	}
	from := c.got
	c.got = n
	switch {
	case h.tls != nil && h.tls.onListener(c.listener):
		return h.helloLook(buf[:n]) // tlsfds.go
	case c.body != nil:
		return h.lookBody(i, buf[:n])
	case !h.filter.Ready(buf[:n], from):
		return notYet
	case h.bound == 0:
		return isReady
	}
	return h.lookBody(i, buf[:n])
}

// markReady puts entry i in the ready queue.
func (h *holder) markReady(i int) {
	c := &h.conns[i]
	c.ready = true
	h.ready++
	if c.parked { // parked: given back and waiting; now it waits for a child
		c.parked = false
		h.parked--
	}
	h.queue.push(heldRef{i, c.seq})
}

// nextReady returns the ready entry that waited longest, or -1.
func (h *holder) nextReady() int {
	for {
		r, ok := h.queue.front()
		if !ok {
			return -1
		}
		if c := h.live(r); c != nil && c.ready {
			return r.index
		}
		h.queue.pop()
	}
}

// takeReady removes entry i, the front of the ready queue, from it.
func (h *holder) takeReady() { h.queue.pop() }

// expired returns the oldest entry held since before cutoff and not ready
// (a ready one waits for a child, not for its client), or -1.
func (h *holder) expired(cutoff time.Time) int {
	i := h.oldestWaiting()
	if i < 0 || h.conns[i].since.After(cutoff) {
		return -1 // the oldest is young enough, so are the others
	}
	return i
}

// oldestWaiting returns the entry not ready that was held longest, or -1.
func (h *holder) oldestWaiting() int {
	f, p := h.waiting(&h.fresh), h.waiting(&h.idle)
	if f < 0 || p >= 0 && h.conns[p].since.Before(h.conns[f].since) {
		return p
	}
	return f
}

// shed returns the entry to close when no more may be held: the oldest
// fresh one not ready (silent, or part of a request), else the oldest
// parked one; -1 if every entry is ready (it waits for a child, not for
// its client).
func (h *holder) shed() int {
	if i := h.waiting(&h.fresh); i >= 0 {
		return i
	}
	return h.waiting(&h.idle)
}

// waiting returns the oldest entry of q that is held and not ready, or -1,
// dropping from q's front the entries that left it or became ready.
func (h *holder) waiting(q *refQueue) int {
	for {
		r, ok := q.front()
		if !ok {
			return -1
		}
		if c := h.live(r); c != nil && !c.ready {
			return r.index
		}
		q.pop()
	}
}

// oldest returns when the oldest connection held was accepted or parked,
// zero with none.
func (h *holder) oldest() time.Time {
	var t time.Time
	for _, i := range [2]int{h.oldestWaiting(), h.nextReady()} {
		if i >= 0 && (t.IsZero() || h.conns[i].since.Before(t)) {
			t = h.conns[i].since
		}
	}
	return t
}
