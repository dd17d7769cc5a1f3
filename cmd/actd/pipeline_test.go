package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
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

// builtinEcho is the built-in handler's /bytes/N, which answers N bytes.
var builtinEcho = pooltest.Echo{
	Request: func(n, extra string) string { return "GET /bytes/" + n + " HTTP/1.1\r\nHost: a\r\n" + extra + "\r\n" },
	Expect: func(r *bufio.Reader, n string) error {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want, _ := strconv.Atoi(n); err != nil || resp.StatusCode != 200 || len(b) != want {
			return fmt.Errorf("got %s, %d bytes (%v); want 200, %d bytes", resp.Status, len(b), err, want)
		}
		return nil
	},
}

// TestPartialNextRequest: 8 connections each send a whole request and the
// start of the next, read the first answer, then trickle the rest a byte
// every 100 ms (4 s; pooltest.Echo.PartialNext), while 2 good clients send
// small requests to the 2 children: every request is answered, and no
// child is seen busy for a second (a child that read the start of the next
// request would wait the 4 s on it).
func TestPartialNextRequest(t *testing.T) {
	a, addr := pipelinePool(t)
	stop := make(chan struct{})
	good := goodClients(a, 2, stop)
	busy := watchBusy(a, stop)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() { errs <- builtinEcho.PartialNext(addr, i, func() {}) }()
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
	builtinEcho.CheckBurst(t, addr, 1)
}
