package acceptfilter

import (
	"strings"
	"testing"

	"github.com/actd/actd/internal/conformance"
)

// TestAwait: what a connection whose head is in still waits for, under
// the master's body rule.
func TestAwait(t *testing.T) {
	const post = "POST / HTTP/1.1\r\nHost: a\r\n"
	head := func(fields string) string { return post + fields + "\r\n" }
	cl := head("Content-Length: 10\r\n")
	te := head("Transfer-Encoding: chunked\r\n")
	for _, tc := range []struct {
		name   string
		peek   string
		queued int // 0: len(peek)
		bound  int64
		ready  bool
		need   int64
	}{
		{"no body", head(""), 0, 1 << 20, true, 0},
		{"length 0", head("Content-Length: 0\r\n"), 0, 1 << 20, true, 0},
		{"length, none yet", cl, 0, 1 << 20, false, int64(len(cl)) + 10},
		{"length, part", cl + "12345", 0, 1 << 20, false, int64(len(cl)) + 10},
		{"length, in", cl + "1234567890", 0, 1 << 20, true, 0},
		{"length, queued beyond the peek", cl, len(cl) + 10, 1 << 20, true, 0},
		{"length over the bound", cl + "1234", 0, 4, true, 0},
		{"length under the bound", cl + "123", 0, 4, false, int64(len(cl)) + 4},
		{"bound 0", cl, 0, 0, true, 0},
		{"101 fields", head("Content-Length: 10\r\n" + strings.Repeat("X: y\r\n", 100)), 0, 1 << 20, true, 0},
		{"100 fields", head(strings.Repeat("X: y\r\n", 98) + "Content-Length: 10\r\n"), 0, 1 << 20, false, int64(len(head(strings.Repeat("X: y\r\n", 98)+"Content-Length: 10\r\n"))) + 10},
		{"two lengths", head("Content-Length: 10\r\nContent-Length: 10\r\n"), 0, 1 << 20, true, 0},
		{"length not digits", head("Content-Length: +10\r\n"), 0, 1 << 20, true, 0},
		{"length and chunked", head("Content-Length: 10\r\nTransfer-Encoding: chunked\r\n"), 0, 1 << 20, true, 0},
		{"gzip, chunked", head("Transfer-Encoding: gzip, chunked\r\n"), 0, 1 << 20, true, 0},
		{"chunked in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 1 << 20, true, 0},
		{"chunked, none yet", te, 0, 1 << 20, false, int64(len(te)) + 1<<20},
		{"chunked, a chunk", te + "5\r\nhello\r\n", 0, 1 << 20, false, int64(len(te)) + 1<<20},
		{"chunked, last chunk without its CRLF", te + "5\r\nhello\r\n0\r\n", 0, 1 << 20, false, int64(len(te)) + 1<<20},
		{"chunked, in", te + "5\r\nhello\r\n0\r\n\r\n", 0, 1 << 20, true, 0},
		{"chunked, trailers", te + "5;x=y\r\nhello\r\n0\r\nT: v\r\n\r\n", 0, 1 << 20, true, 0},
		{"chunked, trailers not ended", te + "0\r\nT: v\r\n", 0, 1 << 20, false, int64(len(te)) + 1<<20},
		{"chunked, bad size", te + "x\r\n", 0, 1 << 20, true, 0},
		{"chunked, data without CRLF", te + "1\r\nab\r\n", 0, 1 << 20, true, 0},
		{"chunked, bare LF", te + "1\nab", 0, 1 << 20, true, 0},
		{"chunked at the bound", te + "5\r\nhel", 0, 6, true, 0},
		{"chunked, huge size", te + "7fffffffffffffff\r\nab", 0, 1 << 20, false, int64(len(te)) + 1<<20},
		{"chunked, size overflows", te + "ffffffffffffffff\r\n", 0, 1 << 20, true, 0},
		{"expect, length", head("Expect: 100-continue\r\nContent-Length: 10\r\n"), 0, 1 << 20, false,
			int64(len(head("Expect: 100-continue\r\nContent-Length: 10\r\n"))) + 10},
		{"empty lines first", "\r\n\r\n" + cl, 0, 1 << 20, false, int64(len(cl)) + 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			queued := tc.queued
			if queued == 0 {
				queued = len(tc.peek)
			}
			w := Await([]byte(tc.peek), queued, tc.bound)
			if w.Ready != tc.ready || w.Need != tc.need {
				t.Errorf("got ready %v, need %d; want %v, %d", w.Ready, w.Need, tc.ready, tc.need)
			}
			if over := strings.Contains(tc.name, "over the bound") || strings.Contains(tc.name, "at the bound"); w.Bound != over {
				t.Errorf("got bound %v, want %v", w.Bound, over)
			}
			if w.Chunked && !w.Ready && w.Peek < int(w.Need) {
				t.Errorf("got peek %d for a chunked body, want at least %d", w.Peek, w.Need)
			}
		})
	}
}

// TestExpectContinue: which heads ask for 100 Continue.
func TestExpectContinue(t *testing.T) {
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", true},
		{"POST / HTTP/1.1\r\nexpect:100-Continue \r\nContent-Length: 1\r\n\r\n", true},
		{"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", false},
		{"POST / HTTP/1.1\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\n", false},
	} {
		b, ok := ParseBody([]byte(tc.head))
		if !ok || b.Continue != tc.want {
			t.Errorf("%q: got continue %v, ok %v; want %v, true", tc.head, b.Continue, ok, tc.want)
		}
	}
}

// TestWhole: the children's rule: the head rule, and a body whole within
// the peek.
func TestWhole(t *testing.T) {
	const cl = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
	const te = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	big := "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 40000\r\n\r\n"
	for _, tc := range []struct {
		filter Filter
		peek   string
		want   bool
	}{
		{HTTP, "", false},
		{HTTP, "GET / HTTP/1.1\r\nHost: a\r\n", false},
		{HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{HTTP, cl, false},
		{HTTP, cl + "1234", false},
		{HTTP, cl + "12345", true},
		{HTTP, cl + "12345GET", true}, // and the start of the next
		{HTTP, te + "5\r\nhello\r\n", false},
		{HTTP, te + "5\r\nhello\r\n0\r\n\r\n", true},
		{HTTP, te + "zz\r\n", true}, // a fault: the worker answers 400
		{HTTP, big + strings.Repeat("x", HeadLimit-len(big)), false},
		{HTTP, "POST / HTTP/1.1\r\nA: b\nContent-Length: 5\r\n\r\n", true}, // bare LF: the worker answers 400
		{Data, cl, true},
		{Data, "G", true},
	} {
		t.Run(tc.filter.String()+"/"+strings.ReplaceAll(tc.peek[:min(len(tc.peek), 40)], "\r\n", "|"), func(t *testing.T) {
			if got := tc.filter.Whole([]byte(tc.peek)); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestParseBodyAllocs: every connection a child screens is judged by
// ParseBody (Whole), so a head costs no allocation there.
func TestParseBodyAllocs(t *testing.T) {
	peek := []byte("GET /index.html HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n")
	var b Body
	if n := testing.AllocsPerRun(100, func() { b, _ = ParseBody(peek) }); n != 0 {
		t.Errorf("ParseBody: %v allocations per head, want 0", n)
	}
	if b.Fields != 3 || b.Head != len(peek) {
		t.Errorf("got %+v, want 3 fields and the head's %d bytes", b, len(peek))
	}
}

// TestWholeScansOnce: Whole under HTTP, which runs ParseBody first and the
// head rule only where ParseBody finds no end, is the rule as written
// (Ready, then the body's): for every prefix of every conformance case
// and of heads with bodies, faults and limits. Span gives the same
// answer, and the first request's bytes where its end is in the peek.
func TestWholeScansOnce(t *testing.T) {
	long := strings.Repeat("x", LineLimit+8)
	inputs := []string{
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n12345GET / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
		"\r\n\r\nGET / HTTP/1.1\r\nA: b\nC: d\r\n\r\n",
		"GET / HTTP/1.1\r\nA: \x01\r\n\r\n", "GET / HTTP/1.1\rX\r\n\r\n", "GET /" + long + " HTTP/1.1\r\n\r\n",
	}
	for _, c := range conformance.Cases {
		inputs = append(inputs, c.Bytes())
	}
	rule := func(peek []byte) bool { // docs/protocol.md, "The body rule", literally
		if !HTTP.Ready(peek, 0) {
			return false
		}
		b, ok := ParseBody(peek)
		switch {
		case !ok || !b.Has():
			return true
		case b.Chunked:
			return ChunkedEnd(peek[b.Head:]) != 0
		}
		return int64(len(peek)-b.Head) >= b.Length
	}
	span := func(peek []byte) int { // where a whole, well framed request ends
		b, ok := ParseBody(peek)
		switch {
		case !ok:
			return 0
		case b.Chunked:
			if end := ChunkedEnd(peek[b.Head:]); end > 0 {
				return b.Head + end
			}
			return 0 // not whole yet, or a fault
		case int64(len(peek)-b.Head) < b.Length:
			return 0
		}
		return b.Head + int(b.Length)
	}
	for _, in := range inputs {
		for n := 0; n <= len(in); n++ {
			p := []byte(in[:n])
			want := rule(p)
			if got := HTTP.Whole(p); got != want {
				t.Fatalf("Whole(%q): got %v, want %v", p, got, want)
			}
			wantSpan := 0
			if want {
				wantSpan = span(p)
			}
			if got, ready := HTTP.Span(p); got != wantSpan || ready != want {
				t.Fatalf("Span(%q): got %d, %v, want %d, %v", p, got, ready, wantSpan, want)
			}
		}
	}
}
