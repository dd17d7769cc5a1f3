package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestProxyHeaderWithRequest: under the default pool's filter, one child
// (so that each connection lands where the last one was served, on the
// same fd number), a PROXY v1 header and what follows it on every path the
// built-in handler's read of the header takes: the header and a whole
// request in one segment (read together: worker.ReadPastHeader), with a
// pipelined second request, with a body; the header and part of a request
// (to the master, the header read there, the rest later); the header
// alone; a keep-alive next request on the same connection, at once (the
// child keeps it) and after a pause (parked). Each answer names the
// header's client.
func TestProxyHeaderWithRequest(t *testing.T) {
	addr := freeAddr(t)
	startActd(t, nil, "--listen", "web="+addr, "--proxy-protocol-from", "web=127.0.0.1", "--accept-filter", "http",
		"--max-children", "1", "--start-children", "1")
	const post = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
	for _, tc := range []struct {
		name  string
		n     int  // answers
		first bool // all parts sent before the first answer is read (else as talk does)
		parts []string
	}{
		{"header and request", 1, false, []string{proxyV1 + keptRequest}},
		{"header and two pipelined requests", 2, true, []string{proxyV1 + keptRequest + keptRequest}},
		{"header and a request with a body", 1, true, []string{proxyV1 + post}},
		{"header and part of a request", 1, false, []string{proxyV1 + keptRequest[:10], pause, keptRequest[10:]}},
		{"header and a head, its body later", 1, true, []string{proxyV1 + post[:len(post)-5], pause, "hello"}},
		{"header alone", 1, false, []string{proxyV1, pause, keptRequest}},
		{"keep-alive at once", 3, false, []string{proxyV1 + keptRequest, keptRequest, keptRequest}},
		{"keep-alive after a pause", 2, false, []string{proxyV1 + keptRequest, pause, keptRequest}},
		{"again, header and request", 1, false, []string{proxyV1 + keptRequest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bodies []string
			var silent bool
			if tc.first {
				bodies = sendThenRead(t, addr, tc.n, tc.parts...)
			} else {
				bodies, silent = talk(t, addr, tc.n, tc.parts...)
			}
			if silent || len(bodies) != tc.n {
				t.Fatalf("got %q (closed without an answer: %v), want %d answers", bodies, silent, tc.n)
			}
			for i, b := range bodies {
				if !strings.HasPrefix(b, "200 OK slot=") || !strings.Contains(b, "client=203.0.113.7:5555") {
					t.Errorf("answer %d: %q, want 200 naming client=203.0.113.7:5555", i+1, b)
				}
			}
		})
	}
}

// sendThenRead connects to addr, sends parts (waiting 300 ms at each
// pause), then reads n HTTP responses. It returns their bodies, fewer if
// the connection ends first.
func sendThenRead(t *testing.T, addr string, n int, parts ...string) []string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a bound, not a speed
	for _, p := range parts {
		if p == pause {
			time.Sleep(300 * time.Millisecond) // a client that pauses: the thing tested
			continue
		}
		if _, err := c.Write([]byte(p)); err != nil {
			return nil
		}
	}
	r := bufio.NewReader(c)
	var bodies []string
	for range n {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		bodies = append(bodies, resp.Status+" "+strings.TrimSpace(string(b)))
	}
	return bodies
}
