package main

import (
	"bufio"
	"bytes"
	"errors"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/acceptfilter"
)

// closeQuietly is readRequest's status for a connection to close without
// an answer: the client closed it, or sent nothing before the idle timeout.
const closeQuietly = -1

// giveBack is readRequest's status for a next request not whole on a
// connection that may go back to the master (errNotWhole): none of it was
// read.
const giveBack = -2

// pastPeek is readRequest's status for a request longer than the pending
// peek it was parsed from (errPastPeek): fdConn.readNext reads it again.
const pastPeek = -3

// readRequest reads one request's head and body from r, by the framing
// rules every actd worker kind keeps (docs/http.md, RFC 9112):
//
//   - empty lines (CRLF) before the request line are skipped; every line
//     ends in CRLF, a bare LF is 400
//   - request line: METHOD SP TARGET SP HTTP/1.x; METHOD a token, TARGET
//     without controls or spaces; else 400, and 505 for another HTTP major
//     version; longer than acceptfilter.LineLimit: 414
//   - header line: NAME ":" VALUE, NAME a token (no space before the colon,
//     no folded continuation line), VALUE without controls but tab; else 400
//   - more than maxHeaders headers, or a head over acceptfilter.HeadLimit
//     bytes: 431
//   - Host: exactly once in HTTP/1.1, at most once in HTTP/1.0; else 400
//   - Content-Length: once, digits only, else 400; over 18 digits, or over
//     the rules' maxBody, 413 (none of the body read)
//   - Transfer-Encoding: only in HTTP/1.1 and without Content-Length, and
//     chunked last, else 400; another coding before chunked 501 (framing)
//   - a chunked body by chunkedBody's rules, else 400; one that grows
//     past the rules' maxBody 413
//   - a request not complete within requestDeadline, or a wait for bytes
//     longer than keepAliveIdle: 408; the client's close: closeQuietly
//   - on a connection that may go back to the master, a next request not
//     whole yet, or none of it within keepAliveGrace: giveBack, with no
//     byte of it read; one longer than the pending peek it was parsed
//     from: pastPeek (fdConn.readNext reads it again)
//
// It calls seen, if set, with a valid request line (without its end of
// line; the slice is good only during the call). It returns whether the
// client wants the connection kept open and 0, or the status to answer
// before closing.
func readRequest(r *bufio.Reader, seen func(line []byte)) (keepAlive bool, status int) {
	return readRequestWith(r, seen, nil)
}

// readRequestWith is readRequest under rules (httpd_rules.go); nil: none.
func readRequestWith(r *bufio.Reader, seen func(line []byte), rules *requestRules) (keepAlive bool, status int) {
	line, size, status := requestLineOf(r)
	if status != 0 {
		return false, status
	}
	f := framing{rules: rules}
	if f.keepAlive, status = parseRequestLine(line); status != 0 {
		return false, status
	}
	f.http11 = f.keepAlive
	if seen != nil {
		seen(line)
	}
	if status = f.readHeaders(r, size); status != 0 {
		return false, status
	}
	if status = f.readBody(r); status != 0 {
		return false, status
	}
	return f.keepAlive, 0
}

// requestLineOf reads up to the request line, skipping empty lines. It
// returns the line without its CRLF (good until r is read again), the head
// bytes read so far, and 0 or the status to answer.
func requestLineOf(r *bufio.Reader) (line []byte, size int, status int) {
	for {
		line, err := readLine(r, acceptfilter.LineLimit+1)
		size += len(line)
		switch {
		case err != nil:
			return nil, size, readStatus(err, 414)
		case size > acceptfilter.HeadLimit:
			return nil, size, 431
		case len(line) > acceptfilter.LineLimit+2:
			return nil, size, 414
		case !bytes.HasSuffix(line, crlf):
			return nil, size, 400 // a bare LF
		case len(line) > 2:
			return line[:len(line)-2], size, 0
		}
	}
}

// framing is what a request's headers say of the request and its body.
type framing struct {
	http11    bool
	keepAlive bool
	hosts     int
	length    int    // Content-Length
	lengths   int    // Content-Length headers
	codings   []byte // Transfer-Encoding values, joined with ","
	coded     bool   // Transfer-Encoding came
	rules     *requestRules
}

// readHeaders reads header lines up to the empty line that ends the head,
// size bytes of which came before. It returns 0 or the status to answer.
func (f *framing) readHeaders(r *bufio.Reader, size int) int {
	for n := 0; ; n++ {
		line, err := readLine(r, r.Size())
		if err != nil {
			return readStatus(err, 431)
		}
		if size += len(line); size > acceptfilter.HeadLimit {
			return 431
		}
		if !bytes.HasSuffix(line, crlf) {
			return 400 // a bare LF
		}
		h := line[:len(line)-2]
		if len(h) == 0 {
			return f.check()
		}
		if n == maxHeaders {
			return 431
		}
		if status := f.parseHeader(h); status != 0 {
			return status
		}
	}
}

// check applies the rules that need the whole head. It returns 0 or the
// status to answer.
func (f *framing) check() int {
	switch {
	case f.hosts > 1 || f.http11 && f.hosts == 0:
		return 400
	case f.lengths > 1:
		return 400
	case !f.coded:
		return 0
	case f.lengths > 0 || !f.http11:
		return 400
	}
	return codingStatus(f.codings)
}

// readBody reads and drops the request's body. It returns 0 or the status
// to answer.
func (f *framing) readBody(r *bufio.Reader) int {
	if f.coded {
		return chunkedBody(r, f.rules.bodyLimit())
	}
	if f.rules.overBody(f.length) {
		return 413
	}
	if f.length > 0 {
		if _, err := r.Discard(f.length); err != nil {
			return readStatus(err, 400)
		}
	}
	return 0
}

// errBadByte is a line with a byte no line of a head may hold: a control
// byte but HTAB, DEL, or a CR that no LF follows.
var errBadByte = errors.New("control byte or bare CR")

// readLine is r.ReadSlice('\n') for a line of at most limit bytes before
// its LF, but it fails as soon as the bytes in show the line bad, not
// when a LF comes, which may be never (the accept filter hands such a
// connection over at once): errBadByte, or bufio.ErrBufferFull past limit.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	for {
		buf, _ := r.Peek(r.Buffered())
		end := bytes.IndexByte(buf, '\n')
		if end >= 0 {
			buf = buf[:end]
		}
		switch {
		case hasBadByte(buf):
			return nil, errBadByte
		case len(buf) > limit:
			return nil, bufio.ErrBufferFull
		case end >= 0 || len(buf) == r.Size():
			return r.ReadSlice('\n')
		}
		if _, err := r.Peek(len(buf) + 1); err != nil {
			return nil, err
		}
	}
}

// hasBadByte reports whether line, a line without its LF (or the start of
// one), holds a control byte but HTAB, DEL, or a CR anywhere but last.
func hasBadByte(line []byte) bool {
	for i, c := range line {
		if c < ' ' && c != '\t' && (c != '\r' || i < len(line)-1) || c == 0x7f {
			return true
		}
	}
	return false
}

// readStatus is the status for a failed read: tooLong for a line longer
// than the buffer, 408 for a request past its deadline or a SO_RCVTIMEO
// timeout (the handler makes the latter quiet if no byte had come), 400
// for a control byte or a bare CR, giveBack for errNotWhole and errIdle,
// pastPeek for errPastPeek, closeQuietly for the client's close or a failed socket.
func readStatus(err error, tooLong int) int {
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return tooLong
	case errors.Is(err, errBadByte):
		return 400
	case errors.Is(err, errDeadline), errors.Is(err, unix.EAGAIN):
		return 408
	case errors.Is(err, errNotWhole), errors.Is(err, errIdle):
		return giveBack
	case errors.Is(err, errPastPeek):
		return pastPeek
	}
	return closeQuietly
}

// parseRequestLine checks the request line (without its line end). It
// returns whether HTTP/1.1 keeps the connection by default, and 0 or the
// error status.
func parseRequestLine(line []byte) (keepAlive bool, status int) {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || !acceptfilter.IsToken(method) || !acceptfilter.IsTarget(target) {
		return false, 400
	}
	if len(version) != 8 || string(version[:5]) != "HTTP/" || version[6] != '.' ||
		!isDigit(version[5]) || !isDigit(version[7]) {
		return false, 400
	}
	if version[5] != '1' {
		return false, 505
	}
	return version[7] != '0', 0
}

// parseHeader checks one header line h and notes the headers that frame
// the request. It returns 0 or the error status.
func (f *framing) parseHeader(h []byte) int {
	name, value, ok := bytes.Cut(h, []byte(":"))
	if !ok || !acceptfilter.IsToken(name) || !isFieldValue(value) {
		return 400
	}
	value = bytes.Trim(value, " \t")
	f.rules.header(name, value)
	switch {
	case bytes.EqualFold(name, []byte("Connection")):
		f.keepAlive = bytes.EqualFold(value, []byte("keep-alive")) ||
			(f.keepAlive && !bytes.EqualFold(value, []byte("close")))
	case bytes.EqualFold(name, []byte("Host")):
		f.hosts++
	case bytes.EqualFold(name, []byte("Content-Length")):
		f.lengths++
		n, status := parseLength(value)
		if status != 0 {
			return status
		}
		f.length = n
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		if f.coded {
			f.codings = append(f.codings, ',')
		}
		f.codings, f.coded = append(f.codings, value...), true
	}
	return 0
}

// parseLength parses a Content-Length: 1 to 18 digits. It returns the
// length and 0, or 400 (not digits) or 413 (more digits).
func parseLength(v []byte) (int, int) {
	if len(v) == 0 {
		return 0, 400
	}
	n := 0
	for _, c := range v {
		if !isDigit(c) {
			return 0, 400
		}
		n = n*10 + int(c-'0')
	}
	if len(v) > 18 {
		return 0, 413
	}
	return n, 0
}

var crlf = []byte("\r\n")

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isFieldValue reports whether b has no control byte but tab (so no NUL,
// no bare CR) and no DEL.
func isFieldValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
