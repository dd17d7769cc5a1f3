package worker

// What a screening child's peek found (screen.go), for the handler of the
// connection it screened: a handler that reads exactly (docs/protocol.md,
// "Accept filters: pipelined and partial next requests") peeks before its
// first read, and needs no second recv(MSG_PEEK) for bytes the library
// has just peeked at.

// screened is the connection in hand's peek, set by look for a ready
// connection and cleared by every accept and hand-over (peer.go): a fd
// number is reused from one connection to the next. Only the serving
// goroutine touches it.
var screened struct {
	fd    int
	bytes []byte // the screener's buffer: valid until its next look
}

func init() { screened.fd = -1 }

// setScreened records b, the bytes at the start of connection fd that
// look judged ready.
func setScreened(fd int, b []byte) { screened.fd, screened.bytes = fd, b }

// forgetScreened drops the record.
func forgetScreened() { screened.fd, screened.bytes = -1, nil }

// Peeked returns what the library's screening peek found at the start of
// connection fd (a KeepFDHandler's, called from it), after the PROXY
// header if one came (read already, or left for the handler's
// ReadPastHeader: proxyread.go): bytes still the socket's, a whole request or a
// fault the handler answers (docs/protocol.md, "Accept filters: children
// first"). A handler that reads exactly may take them as its first
// request's peek instead of peeking again; they are valid until it
// returns, and it must not change them. It returns nil for a connection
// the child did not screen (one the master handed over, any connection
// outside an accept filter's children-first path).
func Peeked(fd int) []byte {
	if fd < 0 || screened.fd != fd {
		return nil
	}
	return screened.bytes
}
