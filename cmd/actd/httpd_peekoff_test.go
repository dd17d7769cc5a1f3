package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tests of serving next requests from the peek offset (httpd_peekoff.go)
// and of the path without it (older kernels), each on real TCP sockets:
// the built-in handler run on a connection handed over (heldConn), and in
// a real pool under --accept-filter http.

// peekPaths are the two ways the handler serves a next request on a
// connection that may go back: from the peek, with the socket's peek
// offset on, and by the read of what the peek showed (fallback).
var peekPaths = []struct {
	name     string
	fallback bool
}{
	{"peek offset", false},
	{"read", true},
}

// needPeekOff skips t on the peek offset's path (not fallback) when the
// kernel refuses SO_PEEK_OFF on a TCP socket (before Linux 6.10).
func needPeekOff(t *testing.T, fallback bool) {
	t.Helper()
	if fallback {
		return
	}
	c, fd := acceptOne(t)
	defer c.Close()
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PEEK_OFF, 0); err != nil {
		t.Skipf("the kernel refuses SO_PEEK_OFF on TCP (%v; Linux 6.10+): only the read path is tested", err)
	}
}

// oneByOneGrace is the keep-alive grace of the tests that send requests
// one by one: a bound on the client's turn-around between an answer and
// its next request, not a speed, so that a slow test machine does not
// make the handler give the connection back between two of them.
const oneByOneGrace = 500 * time.Millisecond

// newPeekOffConn returns a newHeldConn on one of the peekPaths, with the
// grace oneByOneGrace.
func newPeekOffConn(t *testing.T, fallback bool) *heldConn {
	t.Helper()
	h := newHeldConn(t)
	h.fallback, h.grace = fallback, oneByOneGrace
	return h
}

// oneByOne sends each request of reqs after the answer to the one before,
// and checks that each is answered 200.
func (h *heldConn) oneByOne(t *testing.T, reqs ...string) {
	t.Helper()
	for i, req := range reqs {
		io.WriteString(h.c, req)
		if codes, err := h.answers(1); err != nil || codes[0] != 200 {
			t.Fatalf("request %d of %d one by one: got %v, %v; want 200", i+1, len(reqs), codes, err)
		}
	}
}

// checkPath checks, once the handler run returned, that it served next
// requests from peeks on the peek offset's path (at least one) and never
// on the read path, and if it gave the connection back that it left the
// offset off.
func (h *heldConn) checkPath(t *testing.T, gave bool) {
	t.Helper()
	switch peeked := h.conn.off.peeked; {
	case h.fallback && peeked > 0:
		t.Errorf("read path: %d requests served from peeks, want 0", peeked)
	case !h.fallback && peeked == 0:
		t.Errorf("peek offset's path: no request served from a peek, want some")
	}
	off, err := unix.GetsockoptInt(h.fd, unix.SOL_SOCKET, unix.SO_PEEK_OFF)
	if gave && err == nil && off != -1 {
		t.Errorf("peek offset after the handler: got %d, want -1 (off)", off)
	}
}

// bytesGet asks the built-in handler for 7 bytes (GET /bytes/7), an
// answer told apart from the others' (bodySize).
const bytesGet = "GET /bytes/7 HTTP/1.1\r\nHost: a\r\n\r\n"

// bodySize reads one answer and returns its status and body's size.
func (h *heldConn) bodySize() (int, int, error) {
	resp, err := http.ReadResponse(h.r, nil)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, len(b), err
}

// TestPeekOffGivesBack: on both paths, after requests sent one by one (the
// peek offset's path switches it on at the second), a connection idle
// past the grace, or with the start of a next request sent with a whole
// one, goes back with the offset off and the socket at the next request's
// first byte: the next hold answers it (GET /bytes/7: 7 bytes), and no
// request before it again, its rest sent later.
func TestPeekOffGivesBack(t *testing.T) {
	post := "POST /bytes/7 HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789"
	cut := len(post) - 3
	for _, path := range peekPaths {
		for _, tc := range []struct {
			name    string
			send    string // at once, after 3 requests one by one
			answers int
			rest    string // to the next hold
		}{
			{"idle", "", 0, bytesGet},
			{"start of a next request", bytesGet[:8], 0, bytesGet[8:]},
			{"a whole request and the start of a next", graceGet + bytesGet[:8], 1, bytesGet[8:]},
			{"a whole request and a next head without its body", graceGet + post[:cut], 1, post[cut:]},
			{"two whole and the start of a next", gracePost + graceGet + bytesGet[:2], 2, bytesGet[2:]},
		} {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				needPeekOff(t, path.fallback)
				h := newPeekOffConn(t, path.fallback)
				gave := h.hold()
				h.oneByOne(t, graceGet, gracePost, graceGet)
				io.WriteString(h.c, tc.send)
				if codes, err := h.answers(tc.answers); err != nil {
					t.Fatalf("answers %v, then %v; want %d", codes, err, tc.answers)
				}
				if g, err := waitGave(gave, 2*time.Second); err != nil || !g {
					t.Fatalf("given back: %v (%v), want true", g, err)
				}
				h.checkPath(t, true)

				gave = h.hold()
				time.Sleep(50 * time.Millisecond)
				io.WriteString(h.c, tc.rest)
				if status, size, err := h.bodySize(); err != nil || status != 200 || size != 7 {
					t.Errorf("next request: got %d, %d bytes, %v; want 200, 7 bytes (the socket at its first byte)", status, size, err)
				}
				h.c.(*net.TCPConn).CloseWrite()
				if _, err := waitGave(gave, 5*time.Second); err != nil {
					t.Errorf("after the client's close: %v", err)
				}
			})
		}
	}
}

// TestPeekOffPipelined: on both paths, requests one by one, pipelined
// bursts of GETs and of bodies (Content-Length and chunked) sent at once,
// and more than discardBatch bytes of requests (the served bytes thrown
// away on the way) are all answered, in order; then the connection, idle,
// goes back with none of the next request consumed. After a whole
// request and the start of a next one, the connection goes back at once
// (the peek after the whole one's sees the start), not with a peek past
// it that waits and takes the rest sent after.
func TestPeekOffPipelined(t *testing.T) {
	chunked := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n5\r\n01234\r\n0\r\n\r\n"
	big := "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + strings.Repeat("p", 1000) + "\r\n\r\n"
	for _, path := range peekPaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			needPeekOff(t, path.fallback)
			h := newPeekOffConn(t, path.fallback)
			gave := h.hold()
			h.oneByOne(t, graceGet, graceGet)
			for i, burst := range []string{
				graceGet + graceGet + graceGet,
				gracePost + chunked + graceGet + gracePost,
				chunked + chunked,
				strings.Repeat(big, 40), // past a peek's 32 KiB: the offset set back
			} {
				io.WriteString(h.c, burst)
				n := strings.Count(burst, "HTTP/1.1")
				codes, err := h.answers(n)
				if err != nil || strings.Count(fmt.Sprint(codes), "200") != n { // each 200, none missing
					t.Fatalf("burst %d (%d bytes): got %v, %v; want %d × 200", i, len(burst), codes, err, n)
				}
			}
			h.oneByOne(t, gracePost, chunked, graceGet)

			io.WriteString(h.c, graceGet+"GET / HT") // the offset set back to the whole one's end
			if codes, err := h.answers(1); err != nil || codes[0] != 200 {
				t.Fatalf("a whole request and the start of a next: got %v, %v; want 200", codes, err)
			}
			time.Sleep(50 * time.Millisecond) // the next peek sees the start: given back at once
			io.WriteString(h.c, "TP/1.1\r\nHost: a\r\n\r\n")
			if g, err := waitGave(gave, 2*time.Second); err != nil || !g {
				t.Fatalf("the start of a next request: given back %v (%v), want true", g, err)
			}
			gave = h.hold()
			if codes, err := h.answers(1); err != nil || codes[0] != 200 {
				t.Fatalf("the next request, in the next hold: got %v, %v; want 200", codes, err)
			}
			h.oneByOne(t, graceGet)

			for range 2 * discardBatch / len(big) {
				h.oneByOne(t, big)
			}
			inq, err := unix.IoctlGetInt(h.fd, unix.SIOCINQ)
			if err != nil || inq > discardBatch+len(big) {
				t.Errorf("after %d bytes of requests, %d (%v) still in the socket, want at most %d: served bytes thrown away in batches",
					2*discardBatch, inq, err, discardBatch+len(big))
			}
			if g, err := waitGave(gave, 2*time.Second); err != nil || !g {
				t.Fatalf("idle: given back %v (%v), want true", g, err)
			}
			h.checkPath(t, true)

			gave = h.hold()
			io.WriteString(h.c, bytesGet)
			if status, size, err := h.bodySize(); err != nil || status != 200 || size != 7 {
				t.Errorf("after the give-back: got %d, %d bytes, %v; want 200, 7 bytes (the socket at its first byte)", status, size, err)
			}
			h.oneByOne(t, gracePost, graceGet)
			h.c.(*net.TCPConn).CloseWrite()
			if _, err := waitGave(gave, 5*time.Second); err != nil {
				t.Errorf("after the client's close: %v", err)
			}
		})
	}
}

// TestPeekOffCloses: on both paths, a connection that closes after
// requests served from peeks closes cleanly (FIN), not with a reset for
// the served bytes left in the socket: after Connection: close, and after
// the client's own close.
func TestPeekOffCloses(t *testing.T) {
	closing := "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
	for _, path := range peekPaths {
		for _, tc := range []struct {
			name string
			end  func(h *heldConn)
		}{
			{"Connection: close", func(h *heldConn) { io.WriteString(h.c, closing) }},
			{"the client's close", func(h *heldConn) { h.c.(*net.TCPConn).CloseWrite() }},
		} {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				needPeekOff(t, path.fallback)
				h := newPeekOffConn(t, path.fallback)
				gave := h.hold()
				h.oneByOne(t, graceGet, gracePost, graceGet)
				tc.end(h)
				if g, err := waitGave(gave, 5*time.Second); err != nil || g {
					t.Fatalf("given back %v (%v), want false: closed", g, err)
				}
				unix.Close(h.fd) // as the library does
				h.fd = -1
				rest, err := io.ReadAll(h.r)
				if err != nil {
					t.Errorf("after the close: read %q, then %v; want a clean end (no reset)", rest, err)
				}
			})
		}
	}
}

// TestPeekOffLaterRead: on both paths, a next request that its peek shows
// not whole but passing (a head with HeadLimit bytes in), after requests
// served from peeks, is read on from its peeked bytes, not from the
// served ones before them: answered 431 when its rest comes.
func TestPeekOffLaterRead(t *testing.T) {
	head := "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: "+strings.Repeat("b", 1000)+"\r\n", 40) + "\r\n"
	for _, path := range peekPaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			needPeekOff(t, path.fallback)
			h := newPeekOffConn(t, path.fallback)
			gave := h.hold()
			h.oneByOne(t, graceGet, gracePost, graceGet)
			io.WriteString(h.c, head[:32<<10])
			time.Sleep(300 * time.Millisecond)
			io.WriteString(h.c, head[32<<10:])
			if codes, err := h.answers(1); err != nil || codes[0] != 431 {
				t.Errorf("got %v, %v; want 431", codes, err)
			}
			if g, err := waitGave(gave, requestDeadline+lingerFor+2*time.Second); err != nil || g {
				t.Errorf("given back %v (%v), want false: closed", g, err)
			}
			h.checkPath(t, false)
		})
	}
}

// TestPeekOffInPool: in a real pool under --accept-filter http (2
// children of the built-in handler, on TCP, on the path the kernel
// offers), one kept-alive connection: requests one by one, GET / and
// GET /bytes/N (N bytes, which the master may finish: the offset is
// switched off before), an idle wait that parks it, and the start of a
// next request that parks it again; every answer is the one asked for.
func TestPeekOffInPool(t *testing.T) {
	a, addr := pipelinePool(t)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second)) // a bound, not a speed
	r := bufio.NewReader(c)
	ask := func(n string) { // "": GET /, else GET /bytes/n
		t.Helper()
		if n == "" {
			io.WriteString(c, graceGet)
			if codes, err := statusCodes(r, 1); err != nil || codes[0] != 200 {
				t.Fatalf("GET /: got %v, %v; want 200", codes, err)
			}
			return
		}
		io.WriteString(c, builtinEcho.Request(n, ""))
		if err := builtinEcho.Expect(r, n); err != nil {
			t.Fatalf("GET /bytes/%s: %v", n, err)
		}
	}
	for _, n := range []string{"", "", "", "1", "", "", "200000", "", "", "", "7"} {
		ask(n)
	}
	parked := a.status(t).Snapshot.Stats.Parked
	waitFor(t, "the idle connection parked", 10*time.Second, func() bool {
		return a.status(t).Snapshot.Stats.Parked > parked
	})
	ask("")
	ask("")
	ask("9")
	next := builtinEcho.Request("10", "")
	parked = a.status(t).Snapshot.Stats.Parked
	io.WriteString(c, builtinEcho.Request("11", "")+next[:9])
	if err := builtinEcho.Expect(r, "11"); err != nil {
		t.Fatalf("GET /bytes/11: %v", err)
	}
	waitFor(t, "the connection with the start of a next request parked", 10*time.Second, func() bool {
		return a.status(t).Snapshot.Stats.Parked > parked
	})
	io.WriteString(c, next[9:])
	if err := builtinEcho.Expect(r, "10"); err != nil {
		t.Errorf("the next request after the park: %v", err)
	}
}

// TestPeekOffUnix: on a Unix stream socket, where the kernel has a peek
// offset too (and MSG_TRUNC copies what it drops), requests one by one,
// a whole request and the start of a next: given back with the offset off
// and the socket at the next request's first byte.
func TestPeekOffUnix(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[1]), "client")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[0])
		t.Fatal(err)
	}
	h := heldOn(t, c, fds[0])
	h.grace = oneByOneGrace
	gave := h.hold()
	h.oneByOne(t, graceGet, gracePost, graceGet, graceGet)
	io.WriteString(h.c, graceGet+bytesGet[:8])
	if codes, err := h.answers(1); err != nil || codes[0] != 200 {
		t.Fatalf("a whole request and the start of a next: got %v, %v; want 200", codes, err)
	}
	if g, err := waitGave(gave, 2*time.Second); err != nil || !g {
		t.Fatalf("given back: %v (%v), want true", g, err)
	}
	if h.conn.off.peeked == 0 {
		t.Skip("the kernel refuses SO_PEEK_OFF on Unix stream sockets: the read path served")
	}
	h.checkPath(t, true)
	gave = h.hold()
	io.WriteString(h.c, bytesGet[8:])
	if status, size, err := h.bodySize(); err != nil || status != 200 || size != 7 {
		t.Errorf("next request: got %d, %d bytes, %v; want 200, 7 bytes (the socket at its first byte)", status, size, err)
	}
	h.c.(*net.UnixConn).CloseWrite()
	if _, err := waitGave(gave, 5*time.Second); err != nil {
		t.Errorf("after the client's close: %v", err)
	}
}

// TestPeekOffParsesOnce: once the peek offset is on, a next request's
// head is parsed once, by the handler, not first by requestSpan: after
// the second request (which switches the offset on, its span found
// first), requests one by one (GET, Content-Length and chunked bodies)
// find no span. A head whose body is not in yet, longer than its peek,
// is read again with its span found first, and goes back to the master
// with none of it read, as before: the next hold answers it. On the read
// path every next request's span is found first.
func TestPeekOffParsesOnce(t *testing.T) {
	chunked := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	head, body := gracePost[:len(gracePost)-10], gracePost[len(gracePost)-10:]
	reqs := []string{graceGet, graceGet, gracePost, chunked, graceGet}
	for _, path := range peekPaths {
		for _, tc := range []struct {
			name  string
			late  bool // last, a POST head whose body comes later
			spans int  // on the peek offset's path; the read path: one more per next request
		}{
			{"one by one", false, 1},
			{"a body after its head", true, 2},
		} {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				needPeekOff(t, path.fallback)
				h := newPeekOffConn(t, path.fallback)
				gave := h.hold()
				h.oneByOne(t, reqs...)
				if tc.late {
					io.WriteString(h.c, head)
				} else {
					h.c.(*net.TCPConn).CloseWrite()
				}
				if g, err := waitGave(gave, 5*time.Second); err != nil || g != tc.late {
					t.Fatalf("given back %v (%v), want %v", g, err, tc.late)
				}
				want := tc.spans
				if path.fallback {
					want += len(reqs) - 2
				}
				if got := h.conn.off.spans; got != want {
					t.Errorf("next requests' spans found first: got %d, want %d", got, want)
				}
				if !tc.late {
					return
				}
				gave = h.hold()
				io.WriteString(h.c, body)
				if codes, err := h.answers(1); err != nil || codes[0] != 200 {
					t.Fatalf("the head given back, its body sent: got %v, %v; want 200", codes, err)
				}
				h.oneByOne(t, graceGet)
				h.c.(*net.TCPConn).CloseWrite()
				if _, err := waitGave(gave, 5*time.Second); err != nil {
					t.Errorf("after the client's close: %v", err)
				}
			})
		}
	}
}
