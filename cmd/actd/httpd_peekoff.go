package main

import (
	"bufio"
	"errors"
	"io"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Serving from the peek offset. On a connection that may go back to the
// master (exact), each next request costs a peek (the grace's wait) and
// the read of the bytes the peek showed whole (httpd_exact.go). With the
// socket's peek offset on (SO_PEEK_OFF: TCP since Linux 6.10, Unix stream
// sockets long before), each peek starts after the bytes peeked before,
// so the handler serves a request from its peek alone and never reads it:
// a kept-alive request costs the peek and the write, as in exclusive
// mode. Nothing past the served requests is consumed, so the rule of
// docs/protocol.md ("never read past the request you serve") holds as
// before:
//
//   - The offset is switched on at a connection's second request, on the
//     peek that shows it whole, by setting it to the end of the whole
//     requests that peek shows (a setsockopt instead of the read): a
//     connection that serves one request sets nothing.
//   - The served bytes stay in the socket until thrown away in batches
//     (recv with MSG_TRUNC, which moves the offset back as much), once
//     more than discardBatch are served, before a later read of a request
//     (a plain read starts at the socket's first byte), and always,
//     exactly the served bytes, before the connection goes back to the
//     master or closes (unread bytes would make the close a reset).
//   - A peek that shows whole requests and the start of a next one sets
//     the offset back to the end of the whole ones (rare).
//   - Once the offset is on, a next request's peek is served to the
//     handler before its span is known (pending), and the handler's own
//     parse finds where it ends: its head is parsed once, not first by
//     requestSpan. A parse that ends within the peek settles it (the
//     offset set back before any bytes after the request, unless they are
//     whole requests); one that needs more than the peek showed unserves
//     it, and the request is read again on the path above, which may give
//     the connection back.
//   - Before the connection goes back (K) or the master may finish a
//     response on it, the offset is switched off: the master peeks the
//     same socket.
//
// A kernel that refuses the option on TCP (EINVAL, EOPNOTSUPP) gets the
// read of today's path, for the rest of the process.

// discardBatch is how many served bytes may stay in the socket: past it,
// the next request's peek throws them away first. It is far below the
// socket's receive buffer, so that the bytes it keeps never stop the
// client's. It is small because each peek walks the socket's queue from
// its first segment to the offset: a small request is a segment of its
// own, so 16 KiB of 40-byte requests made a peek walk up to 400 of them
// (perf, keep-alive c8: tcp_recvmsg_locked 0.9 us per request against
// 0.24 us in exclusive mode; 0.4 us at 2 KiB), while a discard costs one
// recv(MSG_TRUNC) per 2 KiB served, one per about 50 such requests.
const discardBatch = 2 << 10

// peekOffRefused is set once a kernel refused SO_PEEK_OFF on a socket:
// the process reads as before from then on.
var peekOffRefused atomic.Bool

// peekOffset is the state of a connection's peek offset.
type peekOffset struct {
	on       bool // the offset is on
	served   int  // bytes served from peeks and still in the socket: the offset
	fallback bool // never switch it on (tests of the path without it)
	pending  int  // bytes of the last peek served before their span is known
	spans    int  // next requests' spans found by requestSpan, for tests
	peeked   int  // requests' first reads served from a peek, for tests
	scratch  []byte
}

// serveWhole serves the span bytes at the start of p, whole requests of
// the n bytes a next request's first read peeked, from the peek: it
// switches the offset on if it is off, or sets it back to their end if
// the peek showed more. It returns span, or 0 if the offset is off and
// cannot be switched on (the caller reads the span as before), or the
// error of setting it back (the connection must close).
func (c *fdConn) serveWhole(span, n int) (int, error) {
	o := &c.off
	switch {
	case !o.on:
		if o.fallback || peekOffRefused.Load() || setPeekOff(c.fd, span) != nil {
			return 0, nil
		}
		o.on = true
	case n > span:
		if err := setPeekOff(c.fd, o.served+span); err != nil {
			return 0, err
		}
	}
	o.served += span
	o.peeked++
	return span, nil
}

// servePeeked counts n bytes that a peek with the offset on brought and
// that are served as they are (a request not whole in them).
func (c *fdConn) servePeeked(n int) {
	c.off.served += n
	c.off.peeked++
}

// setPeekOff sets fd's peek offset to off (-1: off). It returns the
// setsockopt's error; EINVAL or EOPNOTSUPP also marks the option refused
// for the process.
func setPeekOff(fd, off int) error {
	err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PEEK_OFF, off)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		peekOffRefused.Store(true)
	}
	return err
}

// discard throws away the served bytes still in the socket, which moves
// the offset back to 0. It returns nil, or the recv's error (io.EOF if
// the bytes are not there: the socket was read past them).
func (c *fdConn) discard() error {
	o := &c.off
	for o.served > 0 {
		if o.scratch == nil {
			o.scratch = make([]byte, 64<<10) // discardBatch and a peek: one call
		}
		k := min(o.served, len(o.scratch))
		// MSG_TRUNC: TCP drops the bytes without a copy; a Unix stream
		// socket copies them into scratch.
		n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(c.fd), uintptr(unsafe.Pointer(&o.scratch[0])),
			uintptr(k), unix.MSG_TRUNC|unix.MSG_DONTWAIT, 0, 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			return errno
		case n == 0:
			return io.EOF
		}
		o.served -= int(n)
	}
	return nil
}

// release throws away the served bytes and switches the offset off, so
// that the master may peek the socket from its first byte. It returns nil,
// or the error of either: the connection must then close.
func (c *fdConn) release() error {
	if !c.off.on {
		return nil
	}
	if err := c.discard(); err != nil {
		return err
	}
	c.off.on = false
	return setPeekOff(c.fd, -1)
}

// finish is what the handler returns, gave (the connection goes back to
// the master), after the served bytes are thrown away: false if that
// failed (the connection closes instead).
func (c *fdConn) finish(gave bool) bool {
	if !gave {
		c.discard() // else the close would be a reset
		return false
	}
	return c.release() == nil
}

// servePending serves the n bytes a next request's peek brought, with the
// offset on, to the handler's parse, which finds where the request ends
// (settle) or needs more (unserve). It returns n.
func (c *fdConn) servePending(n int) int {
	c.off.served += n
	c.off.pending = n
	c.off.peeked++
	return n
}

// settle ends a pending peek once the handler's parse read a whole
// request from it, the bytes after it still buffered in r: unless they
// are whole requests too (served from r next), they go back to the
// socket, the offset set back before them. It returns nil, or the error
// of setting the offset back (the connection must close).
func (c *fdConn) settle(r *bufio.Reader) error {
	if c.off.pending == 0 {
		return nil
	}
	c.off.pending = 0
	rest := r.Buffered()
	if rest == 0 {
		return nil
	}
	if b, _ := r.Peek(rest); wholeAfter(b) == rest {
		return nil
	}
	r.Discard(rest)
	c.off.served -= rest
	return setPeekOff(c.fd, c.off.served)
}

// unserve takes back a pending peek whose request the handler's parse
// found longer than it: the offset goes back to the request's first byte
// and the request starts again, its span found by requestSpan (spanned).
// It returns nil, or the error of setting the offset (the connection
// must close).
func (c *fdConn) unserve() error {
	c.off.served -= c.off.pending
	c.off.pending, c.off.peeked = 0, c.off.peeked-1
	c.reads, c.got, c.left, c.spanned = 0, 0, unbounded, true
	return setPeekOff(c.fd, c.off.served)
}
