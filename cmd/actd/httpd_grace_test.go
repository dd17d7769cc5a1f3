package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tests of the keep-alive grace (graceWait) on a connection that may go
// back to the master: the built-in handler on real TCP sockets, run on the
// connection once per hold as the child it is handed to would run it, and
// the built-in handler in a real pool under --accept-filter http.

const (
	graceGet  = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	gracePost = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789"
)

// heldConn is one TCP connection that the built-in handler serves as a
// connection handed over under an accept filter (parkable).
type heldConn struct {
	c        net.Conn // the client's end
	r        *bufio.Reader
	fd       int           // the server's end
	done     chan struct{} // closed when the last handler run returns
	fallback bool          // the handler never switches the peek offset on
	grace    time.Duration // the handler's keep-alive grace; 0: keepAliveGrace
	conn     *fdConn       // the last handler run's connection state
}

// newHeldConn returns a TCP connection; its ends close when the test
// ends, after the last handler run has returned.
func newHeldConn(t *testing.T) *heldConn {
	t.Helper()
	c, fd := acceptOne(t)
	return heldOn(t, c, fd)
}

// heldOn returns the connection of the client's end c and the server's
// end fd, which close when the test ends, after the last handler run.
func heldOn(t *testing.T, c net.Conn, fd int) *heldConn {
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a bound, not a speed
	h := &heldConn{c: c, r: bufio.NewReader(c), fd: fd}
	t.Cleanup(func() {
		c.Close()
		if h.done != nil {
			<-h.done
		}
		if h.fd >= 0 {
			unix.Close(h.fd)
		}
	})
	return h
}

// hold runs a new built-in handler on the connection, as the child it is
// handed to, and returns a channel that gets whether it gave the
// connection back.
func (h *heldConn) hold() <-chan bool {
	gave := make(chan bool, 1)
	h.conn = &fdConn{grace: keepAliveGrace, off: peekOffset{fallback: h.fallback}}
	if h.grace > 0 {
		h.conn.grace = h.grace
	}
	handler := serveHTTP(h.conn, 0, "")
	done := make(chan struct{})
	h.done = done
	go func() {
		gave <- handler(h.fd, true)
		close(done)
	}()
	return gave
}

// answers reads n responses and returns their status codes.
func (h *heldConn) answers(n int) ([]int, error) { return statusCodes(h.r, n) }

// statusCodes reads n responses from r and returns their status codes.
func statusCodes(r *bufio.Reader, n int) ([]int, error) {
	var codes []int
	for range n {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return codes, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	return codes, nil
}

// waitGave waits for the handler run to return (within a bound far from
// keepAliveIdle, not a speed) and reports what it returned.
func waitGave(gave <-chan bool, within time.Duration) (bool, error) {
	select {
	case g := <-gave:
		return g, nil
	case <-time.After(within):
		return false, fmt.Errorf("handler still holds the connection after %v", within)
	}
}

// TestGraceGivesBack: after its answers, a connection whose next request
// has not come whole within the grace goes back (the handler returns
// true), idle or with the start of the next request, after one request
// (the first wait polls) or after a burst (the peek alone waits), with
// nothing of the next request read: the next hold serves it from its
// first byte, its rest sent past the grace.
func TestGraceGivesBack(t *testing.T) {
	cut := len(gracePost) - 3 // the head and 7 bytes of the body
	for _, tc := range []struct {
		name       string
		send       string // at once
		answers    int    // before the give-back
		rest       string // after it, to the next hold
		restStatus int
	}{
		{"idle after one request", graceGet, 1, graceGet, 200},
		{"idle after a burst", graceGet + graceGet + graceGet, 3, graceGet, 200},
		{"start of a next request", graceGet + "GET / HT", 1, "TP/1.1\r\nHost: a\r\n\r\n", 200},
		{"start of a next request after a burst", graceGet + graceGet + "GET / HT", 2, "TP/1.1\r\nHost: a\r\n\r\n", 200},
		{"next head without its body", graceGet + gracePost[:cut], 1, gracePost[cut:], 200},
		{"next head without its body after a burst", graceGet + graceGet + gracePost[:cut], 2, gracePost[cut:], 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHeldConn(t)
			gave := h.hold()
			io.WriteString(h.c, tc.send)
			if codes, err := h.answers(tc.answers); err != nil {
				t.Fatalf("answers %v, then %v; want %d", codes, err, tc.answers)
			}
			answered := time.Now()
			if g, err := waitGave(gave, 2*time.Second); err != nil || !g {
				t.Fatalf("given back: %v (%v), want true", g, err)
			}
			t.Logf("given back %v after the last answer", time.Since(answered))

			gave = h.hold() // the next child it is handed to
			time.Sleep(50 * time.Millisecond)
			io.WriteString(h.c, tc.rest)
			codes, err := h.answers(1)
			if err != nil || codes[0] != tc.restStatus {
				t.Errorf("next request: got %v, %v; want %d (no byte of it read by the hold before)", codes, err, tc.restStatus)
			}
			h.c.(*net.TCPConn).CloseWrite() // given back or closed, as the close comes within the grace or not
			if _, err := waitGave(gave, 5*time.Second); err != nil {
				t.Errorf("after the client's close: %v", err)
			}
		})
	}
}

// TestGraceLaterRead: a next request that passed the peek (its head has
// HeadLimit bytes in) and whose rest comes after the grace is read as it
// comes, with the whole wait of a read (keepAliveIdle): answered 431 when
// the rest comes, 408 after keepAliveIdle when it never does; not 408
// when the grace's short timeout ends its read.
func TestGraceLaterRead(t *testing.T) {
	head := "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: "+strings.Repeat("b", 1000)+"\r\n", 40) + "\r\n"
	for _, tc := range []struct {
		name    string
		rest    bool
		want    int
		notLess time.Duration // the answer comes no sooner after the burst's
	}{
		{"rest after 300 ms", true, 431, 0},
		{"rest never", false, 408, keepAliveIdle / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHeldConn(t)
			gave := h.hold()
			io.WriteString(h.c, graceGet+graceGet+head[:32<<10])
			if codes, err := h.answers(2); err != nil {
				t.Fatalf("answers %v, then %v; want 2", codes, err)
			}
			answered := time.Now()
			if tc.rest {
				time.Sleep(300 * time.Millisecond)
				io.WriteString(h.c, head[32<<10:])
			}
			codes, err := h.answers(1)
			if err != nil || codes[0] != tc.want {
				t.Errorf("got %v, %v; want %d", codes, err, tc.want)
			}
			if took := time.Since(answered); took < tc.notLess {
				t.Errorf("answered %v after the burst, want not before %v", took, tc.notLess)
			}
			if g, err := waitGave(gave, requestDeadline+lingerFor+2*time.Second); err != nil || g {
				t.Errorf("given back %v (%v), want false: closed", g, err)
			}
		})
	}
}

// TestGraceParkedInPool: in a real pool under --accept-filter http (2
// children of the built-in handler, on TCP), a kept-alive connection idle
// past the grace, after one request and after a burst, goes back to the
// master (counted parked) and its next request, handed to a child again,
// is answered.
func TestGraceParkedInPool(t *testing.T) {
	a, addr := pipelinePool(t)
	for _, burst := range []int{1, 3} {
		t.Run(fmt.Sprintf("after %d", burst), func(t *testing.T) {
			before := a.status(t).Snapshot.Stats.Parked
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second)) // a bound, not a speed
			r := bufio.NewReader(c)
			io.WriteString(c, strings.Repeat(graceGet, burst))
			if codes, err := statusCodes(r, burst); err != nil {
				t.Fatalf("answers %v, then %v; want %d", codes, err, burst)
			}
			waitFor(t, "the idle connection parked", 10*time.Second, func() bool {
				return a.status(t).Snapshot.Stats.Parked > before
			})
			io.WriteString(c, graceGet)
			if codes, err := statusCodes(r, 1); err != nil || codes[0] != 200 {
				t.Errorf("after the park: got %v, %v; want 200", codes, err)
			}
		})
	}
}
