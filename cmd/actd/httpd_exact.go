package main

import (
	"bufio"
	"errors"
	"io"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/worker"
)

// Exact reading (docs/protocol.md, "Accept filters: pipelined and partial
// next requests"). A connection the master handed over may go back to it
// between two requests only with no byte of the next request read. So on
// such a connection the handler never reads past the request it serves:
// the first read of each request peeks (MSG_PEEK), finds where the
// request ends (requestSpan) and reads exactly that far, or up to as many
// whole requests as the peek shows (a pipelined burst costs one peek and
// one read). A next request that the peek shows not whole (the children's
// rule, acceptfilter.Whole) is not read at all: the connection goes back
// to the master (errNotWhole), which holds it until it is. The cost is one
// recv(MSG_PEEK) per request, but for the first request of a connection
// the library screened: its peek serves (worker.Peeked). For a next
// request that peek is also the keep-alive grace (graceWait): it blocks
// for at most keepAliveGrace, and finding nothing within it gives the
// connection back (errIdle), so a request of a client that sends them back
// to back costs the peek, the read and the write; where the kernel has a
// peek offset for TCP, the peek and the write (httpd_peekoff.go: the
// request is served from its peek, and the served bytes thrown away in
// batches).
//
// Behind a trusted balancer a connection starts with a PROXY header. The
// handler opts in to reading it (worker.ReadsHeader): where the library's
// screening peek showed the header and the first request whole, it leaves
// the header in the socket, and the first request's read
// (worker.ReadPastHeader, in fdConn.read) takes the header and the
// request's span in one readv(2), dropping the header. worker.Peeked
// shows the bytes after the header, so the span is the request's alone.

// errNotWhole is the first read of a next request on a connection that may
// go back to the master, when that request is not whole yet.
var errNotWhole = errors.New("next request not whole")

// errPastPeek is a read of a request whose pending peek (httpd_peekoff.go)
// the handler's parse found too short: the request is read again, its
// span found first (readNext).
var errPastPeek = errors.New("request goes on past its pending peek")

// errIdle is the first read of a next request on a connection that may go
// back to the master, when nothing of it came within keepAliveGrace.
var errIdle = errors.New("no next request within the grace")

// unbounded is a span whose end a peek cannot tell: reads are not limited.
const unbounded = -1

// requestSpan returns how many bytes at the start of peek, the start of a
// request, the request takes, and whether it is whole within peek. For a
// request that is not whole it returns the request's length if its head
// tells it (Content-Length), else unbounded: a head not yet whole, a
// chunked body whose end is not in peek, or a head every worker answers
// with an error and a close.
func requestSpan(peek []byte) (int, bool) {
	b, ok := acceptfilter.ParseBody(peek)
	switch {
	case !ok:
		return unbounded, false
	case b.Chunked:
		end := acceptfilter.ChunkedEnd(peek[b.Head:])
		if end > 0 {
			return b.Head + end, true
		}
		return unbounded, false
	}
	n := int64(b.Head) + b.Length
	return int(n), n <= int64(len(peek))
}

// wholeSpan returns how many bytes at the start of peek are whole
// requests, and the span of the first one if not even it is whole.
func wholeSpan(peek []byte) int {
	if len(peek) == 0 {
		return 0
	}
	n, whole := requestSpan(peek)
	if !whole {
		return n
	}
	return n + wholeAfter(peek[n:])
}

// wholeAfter returns how many bytes at the start of rest, what follows a
// whole request, are whole requests too.
func wholeAfter(rest []byte) int {
	at := 0
	for at < len(rest) {
		n, whole := requestSpan(rest[at:])
		if !whole {
			break
		}
		at += n
	}
	return at
}

// spanOf is wholeSpan of peek, a request's first peek, but for a
// connection's first request the library screened: its span is the
// library's (worker.PeekedSpan), found by the same rule as it judged the
// connection ready, and only what follows it is parsed here.
func (c *fdConn) spanOf(peek []byte) int {
	if c.served == 0 {
		if s := worker.PeekedSpan(c.fd); s > 0 && s <= len(peek) {
			return s + wholeAfter(peek[s:])
		}
	}
	return wholeSpan(peek)
}

// first is the first read of a request on an exact connection: it peeks
// into p, gives up with errNotWhole for a next request not whole, and
// else sets the span the request may read. A next request's bytes it
// serves from the peek where it can (httpd_peekoff.go), with the offset
// on before their span is known (pending: readNext). It returns how
// many bytes of p it serves (0: read the span as before), or the peek's
// error (errIdle: nothing of a next request within the grace), or the
// error of throwing served bytes away, or io.EOF for the client's close.
func (c *fdConn) first(p []byte) (int, error) {
	if c.off.served >= discardBatch {
		if err := c.discard(); err != nil {
			return 0, err
		}
	}
	n, err := c.peek(p)
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF // the client's close: no read to tell it again
	}
	if c.served > 0 && c.off.on && !c.spanned {
		c.left = unbounded
		return c.servePending(n), nil // its span: the handler's parse (readNext)
	}
	if c.served > 0 {
		c.off.spans++
	}
	span := c.spanOf(p[:n])
	whole := span > 0 && span <= n
	if c.served > 0 && !whole && !acceptfilter.HTTP.Whole(p[:n]) {
		return 0, errNotWhole // Whole: a fault is answered, not given back
	}
	c.left = span
	switch {
	case whole && c.served > 0:
		return c.serveWhole(span, n)
	case c.off.on:
		c.servePeeked(n) // not whole: all of it is this request's
		return n, nil
	}
	return 0, nil
}

// peek peeks into p: for a connection's first request the library's own
// peek when it screened the connection (worker.Peeked: the same bytes,
// no system call), else recv(MSG_PEEK); for a next request graceWait.
func (c *fdConn) peek(p []byte) (int, error) {
	if c.served > 0 {
		return c.graceWait(p)
	}
	if b := worker.Peeked(c.fd); len(b) > 0 {
		return copy(p, b), nil
	}
	return peekWait(c.fd, p)
}

// graced reports whether the connection's next requests are waited for at
// keepAliveGrace: it may go back to the master, and served a request.
func (c *fdConn) graced() bool { return c.exact && c.served > 0 }

// graceWait peeks into p for a next request, waiting at most
// keepAliveGrace. The first wait of a connection polls first (ppoll, to
// the microsecond), so that a client idle after one request goes back
// after the grace; once the client has sent a next request within it, each
// wait is the peek alone, bounded by the socket's timeout, lowered to
// keepAliveGrace then and left there (a connection that serves one or two
// requests sets no other option; a later read that must wait longer polls
// for the rest: fdConn.read). The kernel counts that timeout in ticks
// (1 ms is one, and ended after 5 to 14 ms at HZ=250): a client idle after
// a burst holds the child that much longer, once. It returns the peek's
// count or error, errIdle if nothing came within the grace.
func (c *fdConn) graceWait(p []byte) (int, error) {
	if c.served == 1 {
		if !readableBy(c.fd, time.Now().Add(c.grace)) {
			return 0, errIdle
		}
		return peekWait(c.fd, p)
	}
	if c.timeout != c.grace {
		c.setTimeout(c.grace)
	}
	n, err := peekWait(c.fd, p)
	if errors.Is(err, unix.EAGAIN) {
		return 0, errIdle
	}
	return n, err
}

// limit returns p cut to what the current span still allows.
func (c *fdConn) limit(p []byte) []byte {
	if c.left == 0 {
		c.left = unbounded // the framing disagrees with the peek's: read on
	}
	if c.left > 0 && len(p) > c.left {
		return p[:c.left]
	}
	return p
}

// peekWait is recv(2) with MSG_PEEK, waiting as a read does (SO_RCVTIMEO).
func peekWait(fd int, buf []byte) (int, error) {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])),
			uintptr(len(buf)), unix.MSG_PEEK, 0, 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			return 0, errno
		}
		return int(n), nil
	}
}

// wholeBuffered reports whether what r holds of the requests after the one
// just read is whole requests (or nothing): else the handler read part of
// a next request (a chunked body longer than a peek showed, or a
// connection not read exactly) and must not wait on the client for it.
func wholeBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return wholeSpan(b) == len(b)
}

// readNext is readRequestWith for the handler on c: a request whose
// pending peek the parse found too short (pastPeek) is read again, its
// span found first, so that one not whole goes back to the master
// (giveBack) with none of it read; a request parsed from a pending peek
// settles it. It returns what readRequestWith returns, or closeQuietly
// if the socket's peek offset could not be set (the connection closes).
func (c *fdConn) readNext(r *bufio.Reader, seen func([]byte), rules *requestRules) (keepAlive bool, status int) {
	keepAlive, status = readRequestWith(r, seen, rules)
	if status == pastPeek {
		if c.unserve() != nil {
			return false, closeQuietly
		}
		r.Reset(c)
		rules.reset()
		keepAlive, status = readRequestWith(r, seen, rules)
	}
	if status == 0 && c.settle(r) != nil {
		return false, closeQuietly
	}
	return keepAlive, status
}
