package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/worker"
)

// The built-in handler's limits. A prefork child serves one connection at a
// time, so no client may hold it long or make it parse without end.
const (
	// keepAliveIdle bounds each wait for bytes (SO_RCVTIMEO), and so how
	// long an idle kept-alive client holds the child.
	keepAliveIdle = 5 * time.Second
	// requestDeadline bounds a whole request, head and body, counted from
	// when the child starts waiting for it: a client trickling bytes gets
	// 408 and the connection closed after this, not after 5 s per byte.
	requestDeadline = 10 * time.Second
	maxHeaders      = 100 // more: 431 (head and line limits: acceptfilter's)
	lingerFor       = time.Second
	lingerBytes     = 256 << 10
)

// errDeadline is a read past requestDeadline.
var errDeadline = errors.New("request deadline passed")

// httpHandler returns the built-in handler: a minimal HTTP/1.x responder
// that answers every request with "slot=K pid=P\n" (and the client under
// --proxy-protocol-from: httpd_client.go) after waiting delay,
// keeping the connection open as HTTP/1.1 allows. A connection handed over
// under an accept filter (parkable) goes back to the master between two
// requests, unless the next one comes whole within keepAliveGrace (the
// peek that waits for it: graceWait); it never reads past the request it
// serves (httpd_exact.go), and serves next requests from their peek where
// the kernel allows (httpd_peekoff.go).
// A request that breaks the framing rules of docs/http.md (readRequest)
// gets its 400, 413, 414, 431, 501 or 505, one slower than requestDeadline
// 408, each followed by a close; a body over --max-request-body gets 413
// (httpd_rules.go). With --access-log, each request whose request line
// came is logged with its answer's status (httpd_access.go). GET /bytes/N and /files/NAME (from
// files, if set) answer large bodies (httpd_body.go), which the master may
// finish for a slow reader. It works on the blocking
// fd with plain read and write: a child serves one connection at a time, so
// it needs no netpoller, and reuses one buffer for every connection.
func httpHandler(delay time.Duration, files string) worker.KeepFDHandler {
	return serveHTTP(&fdConn{grace: keepAliveGrace}, delay, files)
}

// serveHTTP is httpHandler on conn, which tests may make one that never
// switches the peek offset on (peekOffset.fallback) or that waits longer
// than keepAliveGrace for a next request. Each return throws away the
// bytes served from peeks (fdConn.finish).
func serveHTTP(conn *fdConn, delay time.Duration, files string) worker.KeepFDHandler {
	h := newHandlerState(conn, files)
	ans, r, large, access, rules := h.ans, h.r, h.large, h.access, h.rules
	return func(fd int, parkable bool) bool {
		conn.open(fd, parkable)
		ans.open(fd)
		access.open(fd)
		r.Reset(conn)
		for {
			worker.Yield() // between requests too: see worker.Yield
			conn.begin()
			h.kind = ""
			rules.reset()
			again, status := conn.readNext(r, h.seen, rules)
			if status == giveBack {
				return conn.finish(true) // the next request is the master's until whole
			}
			if status == 408 && conn.got == 0 && r.Buffered() == 0 {
				status = closeQuietly // idle, not slow: nothing of a request came
			}
			if status != 0 {
				access.done(status, int64(len(reasons[status])+1)) // before reject's linger of up to lingerFor
				conn.reject(status)
				return conn.finish(false)
			}
			conn.served++
			if again && parkable && !wholeBuffered(r) {
				again = false // bytes of a next request read: answer it no more
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			var err error
			var finished bool
			if h.kind != "" {
				mayFinish := parkable && r.Buffered() == 0
				if mayFinish && conn.release() != nil { // the master may take it, and peeks
					mayFinish, again = false, false
				}
				finished, err = large.answer(conn, h.kind, h.arg, again, mayFinish)
				access.done(large.status, large.sent)
			} else if again {
				err = conn.writeAll(ans.keep)
				access.done(200, int64(ans.size))
			} else {
				err = conn.writeAll(ans.closing)
				access.done(200, int64(ans.size))
			}
			worker.Report("") // done with it
			if err != nil || finished || !again {
				return conn.finish(false)
			}
		}
	}
}

// keepAliveGrace is how long a child with a handed-over keep-alive
// connection waits for the next request before it gives the connection
// back: a client that sends its requests back to back stays with the child
// (no round trip through the master per request), an idle one costs no
// child. After a first request the wait is a poll, after more the peek of
// the next request itself (graceWait).
const keepAliveGrace = time.Millisecond

// fdConn reads and writes a blocking socket fd, bounding each request's
// reads by requestDeadline, and on a connection that may go back to the
// master (exact) each request's reads by its span (httpd_exact.go).
type fdConn struct {
	fd      int
	since   time.Time     // the child began waiting for this request
	reads   int           // Read calls for this request
	got     int           // bytes read for this request
	timeout time.Duration // the socket's SO_RCVTIMEO, as last set
	exact   bool          // read no byte past the requests a peek shows whole
	served  int           // requests read whole on this connection
	left    int           // bytes the span still allows, or unbounded
	off     peekOffset    // the peek offset (httpd_peekoff.go)
	spanned bool          // this request's span is found before it is served
	grace   time.Duration // keepAliveGrace (tests may lengthen it)
}

// open takes a new connection: one SO_RCVTIMEO of keepAliveIdle, the only
// socket option on the fast path. exact: it may go back to the master.
func (c *fdConn) open(fd int, exact bool) {
	c.fd, c.exact, c.served, c.left = fd, exact, 0, unbounded
	c.off.on, c.off.served, c.off.pending = false, 0, 0
	c.setTimeout(keepAliveIdle)
}

// begin starts the clock of one request. The timeout is restored only if a
// slow request before lowered it, and not on a connection whose next
// requests are waited for at keepAliveGrace (graced).
func (c *fdConn) begin() {
	c.since, c.reads, c.got, c.spanned = time.Now(), 0, 0, false
	if c.timeout < keepAliveIdle && !c.graced() {
		c.setTimeout(keepAliveIdle)
	}
}

// setTimeout sets the socket's SO_RCVTIMEO to d, the longest a blocking
// read or peek waits for bytes before it fails with EAGAIN.
func (c *fdConn) setTimeout(d time.Duration) {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	c.timeout = d
}

// Read reads from the socket; the peer's close is io.EOF, a wait for bytes
// longer than keepAliveIdle EAGAIN, a read after requestDeadline
// errDeadline, and on an exact connection a next request not whole
// errNotWhole, none of it within keepAliveGrace errIdle, and a read past
// a pending peek errPastPeek (readNext reads the request again). The
// first read of a request costs no clock or socket option: only a request
// that needs more reads is checked, and once less than the timeout is
// left, the timeout is lowered to what is left. With the peek offset on,
// the first read of a next request is its peek, and a read throws away
// the bytes served from peeks before it reads (httpd_peekoff.go).
func (c *fdConn) Read(p []byte) (int, error) {
	if c.off.pending > 0 {
		return 0, errPastPeek // the parse needs more than the pending peek
	}
	wait := keepAliveIdle
	if c.reads > 0 {
		left := requestDeadline - time.Since(c.since)
		if left <= 0 {
			return 0, errDeadline
		}
		if wait = min(left, keepAliveIdle); wait < c.timeout {
			c.setTimeout(wait)
		}
	}
	if c.exact && c.reads == 0 {
		n, err := c.first(p)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			c.reads++
			return c.count(n), nil // served from the peek
		}
	}
	if c.exact {
		p = c.limit(p)
	}
	if err := c.discard(); err != nil { // a read starts at the first byte
		return 0, err
	}
	c.reads++
	n, err := c.read(p, wait)
	return c.count(n), err
}

// count notes n bytes read for the request, and returns n.
func (c *fdConn) count(n int) int {
	c.got += n
	if c.left > 0 {
		c.left -= n
	}
	return n
}

// read reads into p, waiting up to wait for bytes: when the socket's
// timeout is shorter (keepAliveGrace, graced), a read that it ends waits
// with ppoll for the rest of wait, then reads again. It returns the bytes
// read, or 0 and io.EOF for the peer's close, EAGAIN once wait passed, or
// the read's error.
func (c *fdConn) read(p []byte, wait time.Duration) (int, error) {
	var end time.Time
	for {
		n, err := worker.ReadPastHeader(c.fd, p) // read(2), and a PROXY header the library left (httpd_exact.go)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN) && wait > c.timeout:
			if end.IsZero() {
				end = time.Now().Add(wait - c.timeout)
			}
			if readableBy(c.fd, end) {
				continue
			}
			return 0, err
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// readableBy reports whether fd is readable (bytes, the peer's close or an
// error to read) before end, polling again after EINTR.
func readableBy(fd int, end time.Time) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		left := time.Until(end)
		if left <= 0 {
			return false
		}
		ts := unix.NsecToTimespec(left.Nanoseconds())
		n, err := unix.Ppoll(fds, &ts, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil && n > 0
		}
	}
}

func (c *fdConn) writeAll(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(c.fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// reject answers status (closeQuietly: nothing) and closes gently: it stops
// writing, then reads and drops what the client still sends, for at most
// lingerFor and lingerBytes, so the answer is not lost to a reset.
func (c *fdConn) reject(status int) {
	if c.discard() != nil || status == closeQuietly {
		return
	}
	if c.writeAll(errorResponse(status)) != nil {
		return
	}
	unix.Shutdown(c.fd, unix.SHUT_WR)
	c.setTimeout(lingerFor)
	buf := make([]byte, 4096)
	for n, end := 0, time.Now().Add(lingerFor); n < lingerBytes && time.Now().Before(end); {
		k, err := unix.Read(c.fd, buf)
		if err != nil && !errors.Is(err, unix.EINTR) || k == 0 && err == nil {
			return
		}
		n += max(k, 0)
	}
}

// errorResponse is the answer for an error status.
func errorResponse(status int) []byte {
	return []byte("HTTP/1.1 " + strconv.Itoa(status) + " " + reasons[status] +
		"\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(reasons[status])+1) +
		"\r\nConnection: close\r\n\r\n" + reasons[status] + "\n")
}

var reasons = map[int]string{
	400: "Bad Request",
	408: "Request Timeout",
	413: "Content Too Large",
	414: "URI Too Long",
	431: "Request Header Fields Too Large",
	501: "Not Implemented",
	505: "HTTP Version Not Supported",
}

// handlerState is what a built-in handler, plain or HTTPS, keeps from one
// request to the next (a child serves one connection at a time): its
// replies, the reader over the connection, the request's text for
// reports, its route (kind and arg), the large bodies, the access log and
// the head rules.
type handlerState struct {
	ans       *replies
	r         *bufio.Reader
	text      requestText
	large     *bodies
	access    *handlerLog
	rules     *requestRules
	kind, arg string
}

// newHandlerState returns the state of a handler reading from conn and
// serving files from the directory files ("" for none).
func newHandlerState(conn io.Reader, files string) *handlerState {
	h := &handlerState{
		ans:    newReplies(),
		r:      bufio.NewReaderSize(conn, acceptfilter.HeadLimit),
		large:  &bodies{files: files},
		access: newHandlerLog(), // httpd_access.go
	}
	h.rules = newRules(worker.MaxRequestBody(), h.access.log.Headers())
	h.access.e.Header = h.rules.value
	return h
}

// seen is readRequestWith's look at each head line: the request's text,
// the access log's fields, and from the request line the route.
func (h *handlerState) seen(line []byte) {
	h.text.seen(line)
	h.access.seen(line)
	_, rest, _ := bytes.Cut(line, []byte(" "))
	target, _, _ := bytes.Cut(rest, []byte(" "))
	h.kind, h.arg = route(target)
}
