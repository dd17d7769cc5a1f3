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
	span  int    // the first request's bytes in them (acceptfilter.Filter.Span), 0 if not known
}

func init() { screened.fd = -1 }

// setScreened records b, the bytes at the start of connection fd that
// look judged ready, span of them the first request's (0: not known).
func setScreened(fd int, b []byte, span int) {
	screened.fd, screened.bytes, screened.span = fd, b, span
}

// forgetScreened drops the record.
func forgetScreened() { screened.fd, screened.bytes, screened.span = -1, nil, 0 }

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

// PeekedSpan returns how many bytes at the start of Peeked(fd) the first
// request takes, head and body, where the library's screening found its
// end (acceptfilter.Filter.Span): a handler that reads exactly may read
// that far without parsing the head for it. It returns 0 when it is not
// known (a connection the child did not screen, a request whose framing
// is a fault, the data filter, a TLS listener): the handler then finds
// the end itself.
func PeekedSpan(fd int) int {
	if fd < 0 || screened.fd != fd {
		return 0
	}
	return screened.span
}
