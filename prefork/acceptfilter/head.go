package acceptfilter

import "bytes"

// The head limits every actd worker kind keeps (docs/http.md).
const (
	// HeadLimit is the most bytes of a request head, from the first byte
	// (empty lines before the request line included) to the CRLF CRLF
	// that ends it: a longer one is 431. The HTTP filter looks at no more:
	// a connection that sent HeadLimit bytes is ready.
	HeadLimit = 32 << 10
	// LineLimit is the longest request line, without its CRLF: a longer
	// one is 414.
	LineLimit = 8 << 10
)

// headReady reports whether a child can answer head, the bytes a client
// sent so far, at once: they hold a whole head (an end, CRLF CRLF, after
// the request line, once any CRLFs before it are skipped), or a fault no
// more bytes can mend, which every worker answers with an error status
// without waiting for an end: a bare LF or a bare CR, a control byte
// other than HTAB, a malformed request line, one longer than LineLimit,
// or HeadLimit bytes. from is where the previous look ended: only what
// is new, and the three bytes before it, are scanned for an end or a
// fault. It returns false for a head that may still become good, and for
// one that is nothing but CRLFs.
func headReady(head []byte, from int) bool {
	if len(head) >= HeadLimit {
		return true
	}
	start := 0
	for bytes.HasPrefix(head[start:], crlf) {
		start += 2
	}
	line := bytes.Index(head[start:], crlf)
	if line < 0 && len(head)-start > LineLimit+1 || line > LineLimit {
		return true
	}
	if line >= 0 && start+line+2 > from && !requestLine(head[start:start+line]) {
		return true // newly complete, and bad
	}
	for i := max(from-3, start); i < len(head); i++ {
		c := head[i]
		if plain[c] {
			continue // most bytes: one load, no case below can hold
		}
		switch {
		case c == '\n' && (i == start || head[i-1] != '\r'):
			return true // a bare LF
		case c == '\r' && i+1 < len(head) && head[i+1] != '\n':
			return true // a bare CR
		case c == '\n' && i >= start+3 && head[i-2] == '\n' && head[i-3] == '\r':
			return true // CRLF CRLF
		case c < ' ' && c != '\t' && c != '\r' && c != '\n' || c == 0x7f:
			return true
		}
	}
	return false
}

var crlf = []byte("\r\n")

// plain marks the bytes headReady passes over without a look at their
// neighbours: every byte but CR, LF, DEL and the controls other than HTAB.
// Every screened connection and every kept-alive request's span
// (ParseBody) is scanned byte by byte, so the common byte costs one load.
var plain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= ' ' && c != 0x7f || c == '\t'
	}
	return t
}()

// requestLine reports whether line (without its CRLF) is a request line
// as every worker takes it: a method token, SP, a target of visible
// bytes, SP, HTTP/D.D.
func requestLine(line []byte) bool {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	return ok1 && ok2 && IsToken(method) && IsTarget(target) && isVersion(version)
}

// tchar marks the bytes of an RFC 9110 token.
var tchar = func() (t [256]bool) {
	for _, c := range []byte("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		t[c] = true
	}
	return t
}()

// IsToken reports whether b is a non-empty RFC 9110 token (a method, a
// field name): the one definition the filter and the built-in handler use.
func IsToken(b []byte) bool {
	for _, c := range b {
		if !tchar[c] {
			return false
		}
	}
	return len(b) > 0
}

// IsTarget reports whether b is a non-empty request target without
// controls, spaces or DEL.
func IsTarget(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return len(b) > 0
}

// isVersion reports whether b is HTTP/D.D (any major: another than 1 is
// answered 505, which is an answer too).
func isVersion(b []byte) bool {
	return len(b) == 8 && string(b[:5]) == "HTTP/" && isDigit(b[5]) && b[6] == '.' && isDigit(b[7])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
