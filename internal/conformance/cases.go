package conformance

import (
	"strconv"
	"strings"
)

// Pieces of requests.
const (
	get  = "GET " + Target + " HTTP/1.1\r\n"
	post = "POST " + Target + " HTTP/1.1\r\nHost: x\r\n"
	host = "Host: x\r\n"
	te   = "Transfer-Encoding: chunked\r\n"
	// hidden is a request carried as a body: answered, it shows a worker
	// that took the body for a request.
	hidden = "GET /hidden HTTP/1.1\r\nHost: h\r\n\r\n"
)

// chunked is a chunked POST whose body is chunks.
func chunked(chunks string) string { return post + te + "\r\n" + chunks }

// Cases is the corpus, in the order of docs/http.md.
var Cases = []Case{
	// Request line: RFC 9112 section 3, and 2.2 for what precedes it.
	{Name: "get", Rule: "9112 3: method SP target SP HTTP-version CRLF", Request: get + host + "\r\n", Status: 200},
	{Name: "empty-lines-first", Rule: "9112 2.2: empty lines (CRLF) before a request line are ignored", Request: "\r\n\r\n" + get + host + "\r\n", Status: 200},
	{Name: "absolute-form", Rule: "9112 3.2.2: absolute-form target", Request: "GET http://x" + Target + " HTTP/1.1\r\n" + host + "\r\n", Status: 200},
	{Name: "two-spaces", Rule: "9112 3: exactly one SP between parts", Request: "GET  " + Target + " HTTP/1.1\r\n" + host + "\r\n", Status: 400},
	{Name: "tab-separator", Rule: "9112 3: SP, not HTAB, between parts", Request: "GET\t" + Target + " HTTP/1.1\r\n" + host + "\r\n", Status: 400},
	{Name: "trailing-space", Rule: "9112 3: nothing after the version", Request: "GET " + Target + " HTTP/1.1 \r\n" + host + "\r\n", Status: 400},
	{Name: "version-lower-case", Rule: "9112 2.3: HTTP-name is case-sensitive", Request: "GET " + Target + " http/1.1\r\n" + host + "\r\n", Status: 400},
	{Name: "no-version", Rule: "9112 3: HTTP/0.9 requests are not taken", Request: "GET " + Target + "\r\n" + host + "\r\n", Status: 400},
	{Name: "version-two-digits", Rule: "9112 2.3: one digit each side of the dot", Request: "GET " + Target + " HTTP/1.10\r\n" + host + "\r\n", Status: 400},
	{Name: "version-2", Rule: "9110 15.6.6: another major version is 505", Request: "GET " + Target + " HTTP/2.0\r\n" + host + "\r\n", Status: 505},
	{Name: "method-not-token", Rule: "9110 9.1: the method is a token", Request: "GE(T " + Target + " HTTP/1.1\r\n" + host + "\r\n", Status: 400},
	{Name: "target-control", Rule: "9112 3.2: no control bytes in the target", Request: "GET " + Target + "\x01 HTTP/1.1\r\n" + host + "\r\n", Status: 400},
	{Name: "request-line-too-long", Rule: "9112 3: a request line over 8 KiB is 414", Request: "GET /" + strings.Repeat("a", 9000) + " HTTP/1.1\r\n" + host + "\r\n", Status: 414},

	// Line ends: RFC 9112 2.2. actd takes CRLF only, everywhere.
	{Name: "lf-request-line", Rule: "9112 2.2: a request line ends in CRLF, not a bare LF", Request: "GET " + Target + " HTTP/1.1\n" + host + "\r\n", Status: 400},
	{Name: "lf-field", Rule: "9112 2.2: a field line ends in CRLF, not a bare LF", Request: get + "Host: x\n\r\n", Status: 400},
	{Name: "lf-lf", Rule: "9112 2.2: a head ends in CRLF CRLF, not LF LF", Request: "GET " + Target + " HTTP/1.1\nHost: x\n\n", Status: 400, Alone: true},
	{Name: "bare-cr", Rule: "9112 2.2: a bare CR is not a line end", Request: "GET " + Target + " HTTP/1.1\rHost: x\r\r", Status: 400, Alone: true},
	{Name: "control-alone", Rule: "9110 5.5: a control byte is answered without waiting for the line's end", Request: get + host + "X-A: a\x00", Status: 400, Alone: true},
	{Name: "bad-request-line-alone", Rule: "9112 3: a bad request line is answered without waiting for the head's end", Request: "GET /\r\n", Status: 400, Alone: true},

	// Field lines: RFC 9112 5, RFC 9110 5.
	{Name: "space-before-colon", Rule: "9112 5.1: no whitespace between name and colon", Request: post + "Content-Length : 35\r\n\r\n", Status: 400},
	{Name: "tab-before-colon", Rule: "9112 5.1: no whitespace between name and colon", Request: get + host + "X-A\t: a\r\n\r\n", Status: 400},
	{Name: "obs-fold", Rule: "9112 5.2: a folded (obs-fold) line is 400", Request: get + host + "X-A: a\r\n b\r\n\r\n", Status: 400},
	{Name: "space-first-field", Rule: "9112 2.2: whitespace before the first field line is 400", Request: get + " " + host + "\r\n", Status: 400},
	{Name: "no-colon", Rule: "9112 5: a field line has a colon", Request: get + host + "X-A\r\n\r\n", Status: 400},
	{Name: "empty-name", Rule: "9110 5.1: a field name is a token", Request: get + host + ": a\r\n\r\n", Status: 400},
	{Name: "nul-in-value", Rule: "9110 5.5: no NUL in a field value", Request: get + host + "X-A: a\x00b\r\n\r\n", Status: 400},
	{Name: "control-in-value", Rule: "9110 5.5: no control byte but HTAB in a field value", Request: get + host + "X-A: a\x01b\r\n\r\n", Status: 400},
	{Name: "del-in-value", Rule: "9110 5.5: no DEL in a field value", Request: get + host + "X-A: a\x7fb\r\n\r\n", Status: 400},
	{Name: "obs-text-value", Rule: "9110 5.5: obs-text (bytes 0x80-0xFF) is taken in a value", Request: get + host + "X-A: caf\xe9\r\n\r\n", Status: 200},
	{Name: "empty-value", Rule: "9110 5.5: a value may be empty", Request: get + host + "X-A:\r\n\r\n", Status: 200},
	{Name: "whitespace-around-value", Rule: "9112 5.1: OWS around a value is not part of it", Request: get + host + "X-A: \t a \t\r\n\r\n", Status: 200},

	// Host: RFC 9110 7.2, RFC 9112 3.2.
	{Name: "no-host", Rule: "9112 3.2: an HTTP/1.1 request without Host is 400", Request: get + "\r\n", Status: 400},
	{Name: "two-hosts", Rule: "9112 3.2: more than one Host is 400", Request: get + host + "Host: y\r\n\r\n", Status: 400},
	{Name: "two-hosts-http10", Rule: "9110 7.2: more than one Host is 400, in HTTP/1.0 too", Request: "GET " + Target + " HTTP/1.0\r\nConnection: keep-alive\r\n" + host + host + "\r\n", Status: 400},
	{Name: "no-host-http10", Rule: "9112 3.2: HTTP/1.0 may leave Host out", Request: "GET " + Target + " HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", Status: 200},

	// Content-Length: RFC 9112 6.2, 6.3; RFC 9110 8.6.
	{Name: "length", Rule: "9112 6.2: the body is Content-Length bytes", Request: post + "Content-Length: 5\r\n\r\nhello", Status: 200},
	{Name: "length-hides-request", Rule: "9112 6.3: a body that looks like a request is a body", Request: post + "Content-Length: " + strconv.Itoa(len(hidden)) + "\r\n\r\n" + hidden, Status: 200},
	{Name: "length-twice-same", Rule: "9110 8.6: one Content-Length value (actd takes no repeats)", Request: post + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", Status: 400},
	{Name: "length-twice-different", Rule: "9112 6.3: differing Content-Length values are 400", Request: post + "Content-Length: 5\r\nContent-Length: 3\r\n\r\nhello", Status: 400},
	{Name: "length-list", Rule: "9110 8.6: a list is not a Content-Length", Request: post + "Content-Length: 5, 5\r\n\r\nhello", Status: 400},
	{Name: "length-plus", Rule: "9110 8.6: digits only", Request: post + "Content-Length: +5\r\n\r\nhello", Status: 400},
	{Name: "length-negative", Rule: "9110 8.6: digits only", Request: post + "Content-Length: -1\r\n\r\n", Status: 400},
	{Name: "length-hex", Rule: "9110 8.6: digits only", Request: post + "Content-Length: 0x5\r\n\r\nhello", Status: 400},
	{Name: "length-inner-space", Rule: "9110 8.6: digits only", Request: post + "Content-Length: 5 5\r\n\r\nhello", Status: 400},
	{Name: "length-empty", Rule: "9110 8.6: digits only, at least one", Request: post + "Content-Length:\r\n\r\n", Status: 400},
	{Name: "length-too-large", Rule: "9110 15.5.14: a length over 18 digits is 413", Request: post + "Content-Length: 1234567890123456789\r\n\r\n", Status: 413},

	// Transfer-Encoding: RFC 9112 6.1, 6.3.
	{Name: "chunked", Rule: "9112 7.1: a chunked body", Request: chunked("5\r\nhello\r\n0\r\n\r\n"), Status: 200},
	{Name: "chunked-case", Rule: "9112 7: coding names are case-insensitive", Request: post + "Transfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Status: 200},
	{Name: "chunked-hides-request", Rule: "9112 6.3: chunk data that looks like a request is data", Request: chunked(strconv.FormatInt(int64(len(hidden)), 16) + "\r\n" + hidden + "\r\n0\r\n\r\n"), Status: 200},
	{Name: "length-and-chunked", Rule: "9112 6.3: Transfer-Encoding with Content-Length is 400, then close", Request: post + "Content-Length: 5\r\n" + te + "\r\n0\r\n\r\n", Status: 400},
	{Name: "chunked-and-length", Rule: "9112 6.3: Transfer-Encoding with Content-Length is 400, then close", Request: post + te + "Content-Length: 5\r\n\r\n0\r\n\r\n", Status: 400},
	{Name: "chunked-http10", Rule: "9112 6.1: Transfer-Encoding in HTTP/1.0 is faulty framing", Request: "POST " + Target + " HTTP/1.0\r\nConnection: keep-alive\r\n" + te + "\r\n0\r\n\r\n", Status: 400},
	{Name: "coding-not-chunked", Rule: "9112 6.3: chunked not the final coding is 400", Request: post + "Transfer-Encoding: gzip\r\n\r\n", Status: 400},
	{Name: "chunked-not-last", Rule: "9112 6.3: chunked not the final coding is 400", Request: post + "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", Status: 400},
	{Name: "coding-before-chunked", Rule: "9112 6.1: an unknown coding is 501", Request: post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", Status: 501},
	{Name: "chunked-twice", Rule: "9112 7: chunked is applied once", Request: post + te + te + "\r\n0\r\n\r\n", Status: 400},
	{Name: "chunked-nbsp", Rule: "9112 7: the coding is the exact token", Request: post + "Transfer-Encoding: chunked\xa0\r\n\r\n0\r\n\r\n", Status: 400},
	{Name: "chunked-prefix", Rule: "9112 7: the coding is the exact token", Request: post + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", Status: 400},
	{Name: "coding-empty", Rule: "9112 6.1: an empty Transfer-Encoding is 400", Request: post + "Transfer-Encoding:\r\n\r\n", Status: 400},

	// Chunk lines: RFC 9112 7.1.
	{Name: "chunk-extension", Rule: "9112 7.1.1: chunk extensions, with BWS", Request: chunked("5 ; a=b ;c=\"d\"\r\nhello\r\n0\r\n\r\n"), Status: 200},
	{Name: "chunk-trailer", Rule: "9112 7.1.2: trailer fields", Request: chunked("5\r\nhello\r\n0\r\nX-T: a\r\n\r\n"), Status: 200},
	{Name: "chunk-size-lf", Rule: "9112 7.1: a chunk-size line ends in CRLF", Request: chunked("5\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-data-lf", Rule: "9112 7.1: chunk data ends in CRLF", Request: chunked("5\r\nhello\n0\r\n\r\n"), Status: 400},
	{Name: "last-chunk-lf", Rule: "9112 7.1: the last chunk ends in CRLF", Request: chunked("5\r\nhello\r\n0\n\r\n"), Status: 400},
	{Name: "chunk-end-lf", Rule: "9112 7.1: the body ends in CRLF", Request: chunked("5\r\nhello\r\n0\r\n\n"), Status: 400},
	{Name: "chunk-extension-lf", Rule: "9112 7.1: a bare LF does not end an extension", Request: chunked("5;a\n\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-line-too-long", Rule: "9112 7.1: a chunk-size line over 4 KiB is 400", Request: chunked("5;a=" + strings.Repeat("b", 5000) + "\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-size-space-first", Rule: "9112 7.1: the chunk size comes first", Request: chunked(" 5\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-size-not-hex", Rule: "9112 7.1: the chunk size is hex digits", Request: chunked("g\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-size-empty", Rule: "9112 7.1: the chunk size is at least one digit", Request: chunked("\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-size-overflow", Rule: "9112 7.1: a chunk size over 16 hex digits is 400", Request: chunked("10000000000000005\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-too-long", Rule: "9112 7.1: chunk data is chunk-size bytes", Request: chunked("3\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "chunk-extension-control", Rule: "9112 7.1.1: no control bytes in an extension", Request: chunked("5;a\x01\r\nhello\r\n0\r\n\r\n"), Status: 400},
	{Name: "trailer-bad-name", Rule: "9112 7.1.2: a trailer is a field line", Request: chunked("0\r\nX T: a\r\n\r\n"), Status: 400},
	{Name: "trailer-lf", Rule: "9112 7.1.2: a trailer line ends in CRLF", Request: chunked("0\r\nX-T: a\n\r\n"), Status: 400},

	// Limits: RFC 9110 15.5.14, RFC 6585 5 (431).
	{Name: "fields-too-many", Rule: "6585 5: more than 100 field lines is 431", Request: get + host + strings.Repeat("X-A: a\r\n", 100) + "\r\n", Status: 431},
	{Name: "head-too-large", Rule: "6585 5: a head over 32 KiB is 431", Request: get + host + strings.Repeat("X-A: "+strings.Repeat("a", 1000)+"\r\n", 34) + "\r\n", Status: 431},
}
