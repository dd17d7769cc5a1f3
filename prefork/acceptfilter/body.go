package acceptfilter

import (
	"bytes"
	"math"

	"github.com/actd/actd/protocol"
)

// Body is the body a whole, well framed request head announces
// (docs/http.md): its framing and where it starts.
type Body struct {
	Head     int   // bytes of the head: CRLFs before the request line and the CRLF CRLF included
	Length   int64 // Content-Length; 0 for none, and for a chunked body
	Chunked  bool  // Transfer-Encoding: chunked
	Continue bool  // Expect: 100-continue, in HTTP/1.1
	Fields   int   // header fields in the head
}

// Has reports whether the request has a body to wait for.
func (b Body) Has() bool { return b.Chunked || b.Length > 0 }

// ParseBody returns the body the head at the start of peek announces. ok
// is false when peek holds no whole head, or a head whose framing every
// worker answers at once with an error without reading a body (several
// Content-Length values or a malformed one, Transfer-Encoding with
// Content-Length, in HTTP/1.0, or other than chunked alone; a fault of
// the head rule before its end, or a head over HeadLimit): such a
// request waits for no body. Other faults of a field line are the head
// rule's (headReady) or the worker's, which answers them after the body.
func ParseBody(peek []byte) (b Body, ok bool) {
	start := 0
	for bytes.HasPrefix(peek[start:], crlf) {
		start += 2
	}
	end := bytes.Index(peek[start:], []byte("\r\n\r\n"))
	if end < 0 {
		return Body{}, false
	}
	b.Head = start + end + 4
	if b.Head > HeadLimit || headReady(peek[:b.Head-2], 0) {
		return Body{Head: b.Head}, false // a fault in the head (headReady): the worker answers it at once
	}
	// line by line, without a slice of them: every screened connection
	// comes here
	line, rest, more := bytes.Cut(peek[start:start+end], crlf)
	http11 := bytes.HasSuffix(line, []byte("HTTP/1.1"))
	var lengths, codings int
	for more {
		line, rest, more = bytes.Cut(rest, crlf)
		b.Fields++
		name, value, _ := bytes.Cut(line, []byte(":"))
		switch { // the value trimmed only for the three names that need it
		case bytes.EqualFold(name, []byte("Content-Length")):
			lengths++
			b.Length = parseLength(bytes.Trim(value, " \t"))
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			codings++
			b.Chunked = bytes.EqualFold(bytes.Trim(value, " \t"), []byte("chunked"))
		case bytes.EqualFold(name, []byte("Expect")):
			b.Continue = http11 && bytes.EqualFold(bytes.Trim(value, " \t"), []byte("100-continue"))
		}
	}
	switch {
	case lengths > 1 || lengths == 1 && b.Length < 0:
		return Body{Head: b.Head}, false
	case codings > 1 || codings == 1 && (lengths > 0 || !http11 || !b.Chunked):
		return Body{Head: b.Head}, false
	}
	return b, true
}

// parseLength returns a Content-Length of 1 to 18 digits, or -1.
func parseLength(v []byte) int64 {
	if len(v) == 0 || len(v) > 18 {
		return -1
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// Wait is what a request with a whole head still waits for: the master's
// rule under --hold-body.
type Wait struct {
	Body
	Ready bool  // nothing: hand it over
	Bound bool  // ready with bound bytes of a larger body in
	Need  int64 // bytes queued (head included) that make it ready; 0 if Ready
	Peek  int   // bytes to peek at for the next look: more than HeadLimit only for a chunked body
}

// Await applies the body rule to a connection whose head is whole or can
// no longer be (Ready found it ready): peek is what a peek of at least
// HeadLimit bytes saw, queued the bytes in the socket's receive queue
// (FIONREAD), bound the most bytes of body held (--hold-body; 0: none).
// It returns Ready for a request without a body or whose framing is a
// fault (ParseBody), or with more than protocol.MaxHeadFields fields
// (431 at once: the master does not wait for its body), with bound 0, once the body is in (Content-Length
// bytes queued; a chunked body's end within peek, or a fault in it), and
// once bound bytes of body are queued (Bound, if the body is larger);
// else Need, the queued bytes that
// make it ready (head plus body, up to the bound), and Peek, what the next
// look must peek at to see a chunked body's end.
func Await(peek []byte, queued int, bound int64) Wait {
	b, ok := ParseBody(peek)
	if !ok || !b.Has() || bound <= 0 || b.Fields > protocol.MaxHeadFields {
		return Wait{Body: b, Ready: true}
	}
	limit := int64(b.Head) + bound
	if !b.Chunked {
		need := int64(b.Head) + min(b.Length, bound)
		if int64(queued) >= need {
			return Wait{Body: b, Ready: true, Bound: b.Length > bound}
		}
		return Wait{Body: b, Need: need}
	}
	end := ChunkedEnd(peek[b.Head:])
	if end != 0 || int64(queued) >= limit {
		return Wait{Body: b, Ready: true, Bound: end == 0}
	}
	return Wait{Body: b, Need: limit, Peek: int(min(limit, math.MaxInt32))}
}

// Whole is the children's rule (docs/protocol.md, "Accept filters:
// children first"): whether peek, the bytes a child peeked right after
// accept4 (at most HeadLimit), make the connection ready. It is Ready, and
// under HTTP also the body's: a request whose head is whole and whose body
// (ParseBody) is not whole within peek is not ready (the master, given it,
// applies Await). It returns false for no bytes.
func (f Filter) Whole(peek []byte) bool {
	_, ready := f.Span(peek)
	return ready
}

// Span is Whole, and for a ready request whose end peek shows (a whole
// head of good framing, and its whole body) the bytes it takes, head and
// body: what a worker that reads exactly reads for it (docs/protocol.md,
// "Accept filters: pipelined and partial next requests"). span is 0 when
// the connection is not ready, under Data, and for a request whose
// framing is a fault, which the worker answers without a body.
func (f Filter) Span(peek []byte) (span int, ready bool) {
	if f != HTTP {
		return 0, f.Ready(peek, 0)
	}
	// ParseBody first: a head end it finds makes Ready true (the end, or
	// a fault before it), so the head is scanned once, not twice.
	b, ok := ParseBody(peek)
	switch {
	case b.Head == 0:
		return 0, headReady(peek, 0) // no end: ready only at a fault or a limit
	case !ok:
		return 0, true
	case b.Chunked:
		end := ChunkedEnd(peek[b.Head:])
		if end <= 0 {
			return 0, end != 0 // -1: a fault, answered at once
		}
		return b.Head + end, true
	case int64(len(peek)-b.Head) < b.Length:
		return 0, false
	}
	return b.Head + int(b.Length), true
}

// ChunkedEnd scans body, the start of a chunked body (docs/http.md): it
// returns the length of the whole body (its last chunk, trailers and final
// CRLF) once body holds it, -1 at a fault every worker answers with 400 at
// once (a malformed chunk-size line, chunk data not followed by CRLF, a
// trailer line with a bare LF), or 0 while the body may go on.
func ChunkedEnd(body []byte) int {
	at := 0
	for {
		line := bytes.Index(body[at:], crlf)
		if line < 0 {
			return faultIf(bytes.IndexByte(body[at:], '\n') >= 0 || len(body)-at > LineLimit)
		}
		size, ok := chunkSize(body[at : at+line])
		if !ok {
			return -1
		}
		at += line + 2
		if size == 0 {
			return trailersEnd(body, at)
		}
		if size > int64(len(body)-at-2) {
			return 0
		}
		at += int(size)
		if !bytes.HasPrefix(body[at:], crlf) {
			return -1
		}
		at += 2
	}
}

// trailersEnd returns where the trailer section starting at body[at:]
// ends (after its empty line), -1 at a bare LF, 0 while it may go on.
func trailersEnd(body []byte, at int) int {
	for {
		line := bytes.Index(body[at:], crlf)
		if line < 0 {
			return faultIf(bytes.IndexByte(body[at:], '\n') >= 0 || len(body)-at > HeadLimit)
		}
		if bytes.IndexByte(body[at:at+line], '\n') >= 0 {
			return -1
		}
		at += line + 2
		if line == 0 {
			return at
		}
	}
}

// faultIf returns -1 if bad, else 0.
func faultIf(bad bool) int {
	if bad {
		return -1
	}
	return 0
}

// chunkSize parses a chunk-size line without its CRLF: 1 to 16 hex digits
// of a size below 2^63, then anything the worker judges (extensions). ok
// is false for a line that does not start so, or holds a bare LF.
func chunkSize(line []byte) (int64, bool) {
	var n uint64
	digits := 0
	for _, c := range line {
		v, hex := hexValue(c)
		if !hex {
			break
		}
		n = n<<4 | uint64(v)
		digits++
	}
	if digits == 0 || digits > 16 || n > math.MaxInt64 || bytes.IndexByte(line, '\n') >= 0 {
		return 0, false
	}
	return int64(n), true
}

func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
