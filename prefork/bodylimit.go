package prefork

import (
	"github.com/actd/actd/prefork/acceptfilter"
	"golang.org/x/sys/unix"
)

// The request body limit (--max-request-body) where the master holds the
// request (--hold-body, the http filter): a request whose head is whole
// and whose Content-Length is over the limit gets 413 from the master at
// once, and its connection is closed; no child sees it. What the client
// sent already is read and dropped first, up to a few head buffers, so
// that the close does not reset the connection before the answer is
// read (a client that sends a large body without waiting for 100 Continue
// may still see a reset). A chunked body is the child's to count: the
// child answers 413 once it passes the limit. Children apply the same
// limit (ACTD_MAX_REQUEST_BODY) to requests the master does not hold.

// response413 is the master's answer to a body over the limit.
var response413 = []byte("HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n" +
	"Connection: close\r\n\r\nContent Too Large\n")

// overLimit reports whether w, the body rule's view of a request whose
// head is whole, announces a Content-Length over the holder's maxLen.
func (h *holder) overLimit(w acceptfilter.Wait) bool {
	return h.maxLen > 0 && !w.Chunked && w.Length > h.maxLen
}

// answer413 drops what c's client sent, as far as a few reads go, writes
// 413 and stops writing, without waiting for either; the caller closes
// c. It counts the answer, also with the children's (tally.go).
func (h *holder) answer413(c *heldConn) {
	fd := c.fd
	for range 4 {
		if n, err := rawSendNow(fd, h.peek, true); err != nil || n < len(h.peek) {
			break
		}
	}
	rawSendNow(fd, response413, false)
	unix.Shutdown(fd, unix.SHUT_WR)
	h.bodies.tooLarge++
	h.tally.answered(413, c.since)
}
