package main

import (
	"bufio"
	"bytes"
	"errors"

	"golang.org/x/sys/unix"
)

// closeQuietly is readRequest's status for a connection to close without
// an answer: the client closed it, or sent nothing before the idle timeout.
const closeQuietly = -1

// readRequest reads one request's head and body from r, by these rules
// (RFC 9112, strictly where a lax reading could be garbage):
//
//   - request line: METHOD SP TARGET SP HTTP/1.x, ending in CRLF or LF;
//     METHOD a token, TARGET without controls or spaces; else 400, and 505
//     for another HTTP major version
//   - header line: NAME ":" VALUE, NAME a token (no space before the colon,
//     no folded continuation line), VALUE without controls but tab; else 400
//   - at most maxHeaders headers and maxHead bytes of head, else 431; a line
//     longer than maxLine is 400 (request line) or 431 (header)
//   - Content-Length: digits only, else 400; Transfer-Encoding: 501
//   - a request not complete within requestDeadline, or a wait for bytes
//     longer than keepAliveIdle: 408; the client's close: closeQuietly
//
// It calls seen, if set, with a valid request line (without its end of
// line; the slice is good only during the call). It returns whether the
// client wants the connection kept open and 0, or the status to answer
// before closing.
func readRequest(r *bufio.Reader, seen func(line []byte)) (keepAlive bool, status int) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return false, readStatus(err, 400)
	}
	keepAlive, status = parseRequestLine(trimEOL(line))
	if status != 0 {
		return false, status
	}
	if seen != nil {
		seen(trimEOL(line))
	}
	length, size := 0, len(line)
	for n := 0; ; n++ {
		if line, err = r.ReadSlice('\n'); err != nil {
			return false, readStatus(err, 431)
		}
		if size += len(line); size > maxHead {
			return false, 431
		}
		h := trimEOL(line)
		if len(h) == 0 {
			break
		}
		if n == maxHeaders {
			return false, 431
		}
		if keepAlive, length, status = parseHeader(h, keepAlive, length); status != 0 {
			return false, status
		}
	}
	if length > 0 {
		if _, err := r.Discard(length); err != nil {
			return false, readStatus(err, 400)
		}
	}
	return keepAlive, 0
}

// readStatus is the status for a failed read: tooLong for a line longer
// than the buffer, 408 for a request past its deadline or a SO_RCVTIMEO
// timeout (the handler makes the latter quiet if no byte had come),
// closeQuietly for the client's close or a failed socket.
func readStatus(err error, tooLong int) int {
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return tooLong
	case errors.Is(err, errDeadline), errors.Is(err, unix.EAGAIN):
		return 408
	}
	return closeQuietly
}

// parseRequestLine checks the request line (without its line end). It
// returns whether HTTP/1.1 keeps the connection by default, and 0 or the
// error status.
func parseRequestLine(line []byte) (keepAlive bool, status int) {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || !isToken(method) || !isTarget(target) {
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

// parseHeader checks one header line h and reads the two headers the
// handler needs. It returns keepAlive and length updated, and 0 or the
// error status.
func parseHeader(h []byte, keepAlive bool, length int) (bool, int, int) {
	name, value, ok := bytes.Cut(h, []byte(":"))
	if !ok || !isToken(name) || !isFieldValue(value) {
		return keepAlive, length, 400
	}
	value = bytes.Trim(value, " \t")
	switch {
	case bytes.EqualFold(name, []byte("Connection")):
		keepAlive = bytes.EqualFold(value, []byte("keep-alive")) ||
			(keepAlive && !bytes.EqualFold(value, []byte("close")))
	case bytes.EqualFold(name, []byte("Content-Length")):
		n, ok := parseLength(value)
		if !ok {
			return keepAlive, length, 400
		}
		length = n
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		return keepAlive, length, 501
	}
	return keepAlive, length, 0
}

// parseLength parses a Content-Length: 1 to 18 digits.
func parseLength(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// trimEOL strips the CRLF or LF ending line.
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// tchar marks the bytes of an RFC 9110 token.
var tchar = func() (t [256]bool) {
	for _, c := range []byte("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		t[c] = true
	}
	return t
}()

func isToken(b []byte) bool {
	for _, c := range b {
		if !tchar[c] {
			return false
		}
	}
	return len(b) > 0
}

// isTarget reports whether b is a non-empty request target without
// controls, spaces or DEL.
func isTarget(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return len(b) > 0
}

// isFieldValue reports whether b has no control byte but tab (so no NUL,
// no bare CR).
func isFieldValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
