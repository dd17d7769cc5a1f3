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
)

// Process tests of pipelined and partial next requests (issue 21, item 3;
// httpd_exact.go): the built-in handler under --accept-filter http, 2
// children, clients on TCP loopback.

// pipelinePool starts actd with 2 children of the built-in handler under
// the http filter, listening on TCP too, and returns it with that address.
func pipelinePool(t *testing.T) (*actd, string) {
	t.Helper()
	addr := freeAddr(t)
	a := startActd(t, nil, "--listen", addr, "--accept-filter", "http",
		"--min-children", "2", "--max-children", "2", "--start-children", "2", "--handler-delay", "10ms")
	waitFor(t, "2 children idle", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle == 2 })
	return a, addr
}

// readAnswers reads n answers from br and returns their bodies.
func readAnswers(br *bufio.Reader, n int) ([]string, error) {
	var bodies []string
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return bodies, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return bodies, fmt.Errorf("answer %d: %s, %v", len(bodies)+1, resp.Status, err)
		}
		bodies = append(bodies, string(b))
	}
	return bodies, nil
}

// partialNext sends a whole request and the start of a second one at once,
// then the rest of the second a byte every gap, and reads both answers.
func partialNext(addr string, gap time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	second := "GET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
	if _, err := c.Write([]byte("GET /a HTTP/1.1\r\nHost: a\r\n\r\n" + second[:10])); err != nil {
		return err
	}
	for i := 10; i < len(second); i++ {
		time.Sleep(gap) // a client that trickles: the thing tested
		if _, err := c.Write([]byte{second[i]}); err != nil {
			return err
		}
	}
	got, err := readAnswers(bufio.NewReader(c), 2)
	if err != nil {
		return fmt.Errorf("after %d answers: %w", len(got), err)
	}
	return nil
}

// TestPartialNextRequest: 8 connections each send a whole request and the
// start of the next, then trickle the rest a byte every 100 ms (4 s),
// while 2 good clients send small requests to the 2 children: every
// request is answered, and no child is seen busy for a second (a child
// that read the start of the next request would wait the 4 s on it).
func TestPartialNextRequest(t *testing.T) {
	a, addr := pipelinePool(t)
	stop := make(chan struct{})
	good := goodClients(a, 2, stop)
	busy := watchBusy(a, stop)
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- partialNext(addr, 100*time.Millisecond) }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("partial next request: %v", err)
		}
	}
	close(stop)
	answered, err := good()
	longest, _ := busy()
	if err != nil || answered == 0 {
		t.Errorf("good clients: %d answered, then %v; want every one answered", answered, err)
	}
	if longest > time.Second {
		t.Errorf("a child was busy for %v, want under 1s (its compute is 10ms)", longest)
	}
	t.Logf("good requests answered: %d; longest busy seen: %v", answered, longest)
}

// TestPipelinedBurst: 10 requests sent at once on one connection are all
// answered, in order (GET /bytes/N answers N bytes).
func TestPipelinedBurst(t *testing.T) {
	_, addr := pipelinePool(t)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var burst strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&burst, "GET /bytes/%d HTTP/1.1\r\nHost: a\r\n\r\n", i)
	}
	if _, err := c.Write([]byte(burst.String())); err != nil {
		t.Fatal(err)
	}
	got, err := readAnswers(bufio.NewReader(c), 10)
	if err != nil {
		t.Fatalf("after %d answers: %v", len(got), err)
	}
	for i, body := range got {
		if len(body) != i+1 {
			t.Errorf("answer %d: %d bytes, want %d", i+1, len(body), i+1)
		}
	}
}
