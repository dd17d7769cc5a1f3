package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Process tests of --hold-body (prefork/bodies.go): the built-in handler
// under --accept-filter http, 8 children, clients on TCP loopback.

// bodyPool starts actd with 8 children of the built-in handler under the
// http filter, listening on TCP too, and returns it with that address.
func bodyPool(t *testing.T, args ...string) (*actd, string) {
	t.Helper()
	addr := freeAddr(t)
	a := startActd(t, nil, append([]string{"--listen", addr, "--accept-filter", "http",
		"--min-children", "8", "--max-children", "8", "--start-children", "8", "--handler-delay", "10ms"}, args...)...)
	waitFor(t, "8 children idle", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle == 8 })
	return a, addr
}

// slowPost sends head, then body in pieces of piece bytes every gap, and
// returns the status line of the answer.
func slowPost(addr, head string, body []byte, piece int, gap time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte(head)); err != nil {
		return "", err
	}
	for len(body) > 0 {
		time.Sleep(gap) // a client that trickles: the thing tested
		n := min(piece, len(body))
		if _, err := c.Write(body[:n]); err != nil {
			return "", err
		}
		body = body[n:]
	}
	return answer(c)
}

// answer reads a whole answer to a request sent with Connection: close and
// returns its status line; the body must be the built-in handler's.
func answer(c net.Conn) (string, error) {
	all, err := io.ReadAll(c)
	line, _, _ := strings.Cut(string(all), "\r\n")
	if !strings.Contains(string(all), "\r\n\r\nslot=") {
		return line, fmt.Errorf("answer %q (%v)", all, err)
	}
	return line, nil
}

// goodClients runs n clients that send small requests one after another
// until stop is closed, and returns a function that waits for them and
// returns how many were answered and the first failure.
func goodClients(a *actd, n int, stop chan struct{}) func() (int, error) {
	var answered atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := a.get(); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				answered.Add(1)
				time.Sleep(20 * time.Millisecond) // pacing the client loop
			}
		}()
	}
	return func() (int, error) {
		wg.Wait()
		err, _ := first.Load().(error)
		return int(answered.Load()), err
	}
}

// watchBusy samples the status every 100 ms until stop is closed and
// returns the longest a child was seen busy, and the most bodies held.
func watchBusy(a *actd, stop chan struct{}) func() (time.Duration, int) {
	var longest time.Duration
	bodies := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			raw, err := fetchStatus(a.ctl)
			var d statusDoc
			if err != nil || json.Unmarshal(raw, &d) != nil {
				continue
			}
			for _, s := range d.Snapshot.Slots {
				if s.State == "B" {
					longest = max(longest, time.Since(s.Since))
				}
			}
			if h := d.Snapshot.Held; h != nil {
				bodies = max(bodies, h.Bodies)
			}
		}
	}()
	return func() (time.Duration, int) { <-done; return longest, bodies }
}

// TestSlowBodiesHeld: 64 clients each send a 64 KiB body at 16 KiB/s (4 s)
// while 4 good clients send small requests: every request is answered,
// and no child is seen busy for a second (a slow body would keep it 4 s):
// the master holds the bodies until they are in.
func TestSlowBodiesHeld(t *testing.T) {
	a, addr := bodyPool(t)
	stop := make(chan struct{})
	good := goodClients(a, 4, stop)
	busy := watchBusy(a, stop)
	body := []byte(strings.Repeat("x", 64<<10))
	head := fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	errs := make(chan error, 64)
	for range 64 {
		go func() {
			line, err := slowPost(addr, head, body, 1<<10, 62*time.Millisecond)
			if err == nil && line != "HTTP/1.1 200 OK" {
				err = fmt.Errorf("status %q", line)
			}
			errs <- err
		}()
	}
	failed := 0
	for range 64 {
		if err := <-errs; err != nil {
			failed++
			t.Errorf("slow body: %v", err)
		}
	}
	close(stop)
	answered, err := good()
	longest, bodies := busy()
	if err != nil || answered == 0 {
		t.Errorf("good clients: %d answered, then %v; want every one answered", answered, err)
	}
	if longest > time.Second {
		t.Errorf("a child was busy for %v, want under 1s (its compute is 10ms)", longest)
	}
	if bodies == 0 {
		t.Errorf("status never showed a body held")
	}
	t.Logf("good requests answered: %d; longest busy seen: %v; most bodies held: %d; slow failed %d",
		answered, longest, bodies, failed)
	var text strings.Builder
	printStatus(&text, a.status(t), "")
	if !strings.Contains(text.String(), "bodies held: 0 (0 bytes in)") {
		t.Errorf("actd status lacks its bodies line:\n%s", text.String())
	}
}

// TestSlowChunkedBody: a chunked upload sent slowly is held until its last
// chunk, then answered, with no child busy meanwhile.
func TestSlowChunkedBody(t *testing.T) {
	a, addr := bodyPool(t)
	stop := make(chan struct{})
	good := goodClients(a, 2, stop)
	busy := watchBusy(a, stop)
	var body strings.Builder
	for range 16 {
		fmt.Fprintf(&body, "1000\r\n%s\r\n", strings.Repeat("c", 0x1000))
	}
	body.WriteString("0\r\n\r\n")
	head := "POST /chunks HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
	line, err := slowPost(addr, head, []byte(body.String()), 2<<10, 50*time.Millisecond)
	close(stop)
	if err != nil || line != "HTTP/1.1 200 OK" {
		t.Errorf("chunked upload: %q, %v; want 200", line, err)
	}
	answered, gerr := good()
	longest, bodies := busy()
	if gerr != nil || answered == 0 || longest > time.Second || bodies != 1 {
		t.Errorf("good answered %d (%v), longest busy %v, most bodies held %d; want some, under 1s, 1",
			answered, gerr, longest, bodies)
	}
}

// TestBodyOverBound: a body larger than --hold-body goes to a child once
// that much of it is in, and is served when the rest comes; status counts
// it.
func TestBodyOverBound(t *testing.T) {
	a, addr := bodyPool(t, "--hold-body", "64K")
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	body := strings.Repeat("o", 200<<10)
	fmt.Fprintf(c, "POST /big HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	c.Write([]byte(body[:100<<10]))
	waitFor(t, "handed over at the bound", 10*time.Second, func() bool {
		h := a.status(t).Snapshot.Held
		return h != nil && h.BodyBound == 1 && h.Bodies == 0
	})
	c.Write([]byte(body[100<<10:]))
	if line, err := answer(c); err != nil || line != "HTTP/1.1 200 OK" {
		t.Errorf("over the bound: %q, %v; want 200", line, err)
	}
}

// TestExpectContinue: a client that waits for 100 Continue before its
// body gets it from the master, sends the body, and gets one answer, with
// no second 100.
func TestExpectContinue(t *testing.T) {
	_, addr := bodyPool(t)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	body := strings.Repeat("e", 40<<10)
	fmt.Fprintf(c, "PUT /e HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("before the body: got %q (%v), want 100 Continue", line, err)
	}
	if line, _ := r.ReadString('\n'); line != "\r\n" {
		t.Fatalf("after 100 Continue: got %q, want the empty line", line)
	}
	c.Write([]byte(body))
	rest, err := io.ReadAll(r)
	if !strings.HasPrefix(string(rest), "HTTP/1.1 200 OK\r\n") || strings.Contains(string(rest), "100 Continue") {
		t.Errorf("after the body: got %q (%v), want one 200 and no second 100", rest, err)
	}
}
