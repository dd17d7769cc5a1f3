package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/prefork/worker"
)

// The PROXY protocol (--proxy-protocol-from) through real actd masters and
// built-in handler children, on a TCP listener on 127.0.0.1: the built-in
// handler's body names the client (client=HOST:PORT).

// pause and longPause mark, among the parts a client sends, a wait before
// the next.
const (
	pause     = "<pause>"
	longPause = "<long pause>"
)

// proxyV1 is a v1 header from 203.0.113.7:5555.
const proxyV1 = "PROXY TCP4 203.0.113.7 192.0.2.1 5555 80\r\n"

// keptRequest is a keep-alive HTTP/1.1 request.
const keptRequest = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"

// proxyV2 returns a v2 header: command 1 (PROXY) from src, or 0 (LOCAL).
func proxyV2(cmd byte, src string) string {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n")
	b = append(b, 0x20|cmd)
	if cmd == 0 {
		return string(append(b, 0, 0, 0))
	}
	ap := netip.MustParseAddrPort(src)
	body := append(ap.Addr().AsSlice(), netip.MustParseAddr("2001:db8::1").AsSlice()...)
	body = binary.BigEndian.AppendUint16(body, ap.Port())
	body = binary.BigEndian.AppendUint16(body, 80)
	body = append(body, 0x04, 0, 2, 'x', 'y') // a TLV, skipped
	b = append(b, 0x21, 0, 0)
	binary.BigEndian.PutUint16(b[14:], uint16(len(body)))
	return string(append(b, body...))
}

// talk connects to addr, sends parts (waiting 300 ms at each pause) and
// reads the answers to requests HTTP responses (keep-alive: each request
// a part of its own after the first); at longPause it waits 3 s. It returns their bodies, and
// whether the connection closed without a byte of an answer (or was reset
// before the client sent everything).
func talk(t *testing.T, addr string, requests int, parts ...string) (bodies []string, silent bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a bound, not a speed
	r := bufio.NewReader(c)
	for _, p := range parts {
		switch p {
		case pause:
			time.Sleep(300 * time.Millisecond) // a client that pauses: the thing tested
			continue
		case longPause:
			time.Sleep(3 * time.Second) // a pause past a timeout: the thing tested
			continue
		}
		if _, err := c.Write([]byte(p)); err != nil {
			return bodies, len(bodies) == 0 // closed (reset) by the server
		}
		if strings.HasSuffix(p, "\r\n\r\n") && len(bodies) < requests {
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				if _, peekErr := r.Peek(1); len(bodies) == 0 && r.Buffered() == 0 && peekErr != nil {
					return nil, true
				}
				t.Fatalf("answer %d: %v", len(bodies)+1, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			bodies = append(bodies, resp.Status+" "+strings.TrimSpace(string(b)))
		}
	}
	return bodies, false
}

// TestProxyProtocol: from a trusted peer, v1 and v2 headers give the
// client's address on every path a connection takes: served at once
// (exclusive, dispatch, and the filter's children first), held by the
// master (the header, a wait, then the keptRequest; a header in two parts),
// parked keep-alive (the second keptRequest on the connection); LOCAL and
// UNKNOWN keep the real peer; a malformed header, or none, closes the
// connection without an answer.
func TestProxyProtocol(t *testing.T) {
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"exclusive", []string{"--accept", "exclusive"}},
		{"dispatch", nil},
		{"filter http", []string{"--accept-filter", "http"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			addr := freeAddr(t)
			startActd(t, nil, append([]string{"--listen", "web=" + addr, "--proxy-protocol-from", "web=127.0.0.1",
				"--max-spare", "8"}, mode.args...)...)
			v2 := proxyV2(1, "[2001:db8::7]:443")
			for _, tc := range []struct {
				name  string
				n     int // answers
				parts []string
				want  string // in each body; "" for a silent close
			}{
				{"v1 at once", 1, []string{proxyV1 + keptRequest}, "client=203.0.113.7:5555"},
				{"v2 at once", 1, []string{v2 + keptRequest}, "client=[2001:db8::7]:443"},
				{"v1, then the request", 1, []string{proxyV1, pause, keptRequest}, "client=203.0.113.7:5555"},
				{"v2 in two parts", 1, []string{v2[:9], pause, v2[9:] + keptRequest}, "client=[2001:db8::7]:443"},
				{"keep-alive", 2, []string{proxyV1 + keptRequest, pause, keptRequest}, "client=203.0.113.7:5555"},
				{"v2 keep-alive", 2, []string{v2 + keptRequest, pause, keptRequest}, "client=[2001:db8::7]:443"},
				{"v2 LOCAL", 1, []string{proxyV2(0, "") + keptRequest}, "client=127.0.0.1:"},
				{"v1 UNKNOWN", 1, []string{"PROXY UNKNOWN\r\n" + keptRequest}, "client=127.0.0.1:"},
				{"v2 LOCAL, then the request", 1, []string{proxyV2(0, ""), pause, keptRequest}, "client=127.0.0.1:"},
				{"malformed", 1, []string{"PROXY TCP4 203.0.113.7 nowhere 5555 80\r\n" + keptRequest}, ""},
				{"no header", 1, []string{keptRequest}, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					bodies, silent := talk(t, addr, tc.n, tc.parts...)
					switch {
					case tc.want == "" && !silent:
						t.Fatalf("got %q, want the connection closed without an answer", bodies)
					case tc.want == "":
					case silent || len(bodies) != tc.n:
						t.Fatalf("got %q (closed without an answer: %v), want %d answers", bodies, silent, tc.n)
					}
					for i, b := range bodies {
						if !strings.HasPrefix(b, "200 OK slot=") || !strings.Contains(b, tc.want) {
							t.Errorf("answer %d: %q, want 200 with %q", i+1, b, tc.want)
						}
					}
				})
			}
		})
	}
}

// TestProxyProtocolParked: under the filter, a keep-alive connection with
// a PROXY address is given back to the master between two requests
// (parked), and its next keptRequest, handed to a child again, still has it.
func TestProxyProtocolParked(t *testing.T) {
	addr := freeAddr(t)
	a := startActd(t, nil, "--listen", "web="+addr, "--proxy-protocol-from", "web=127.0.0.0/8", "--accept-filter", "http")
	bodies, _ := talk(t, addr, 3, proxyV1+keptRequest, pause, keptRequest, pause, keptRequest)
	if len(bodies) != 3 {
		t.Fatalf("got %q, want 3 answers", bodies)
	}
	for i, b := range bodies {
		if !strings.Contains(b, "client=203.0.113.7:5555") {
			t.Errorf("answer %d: %q, want the client from the header", i+1, b)
		}
	}
	if s := a.status(t).Snapshot.Stats; s.Parked < 2 {
		t.Errorf("parked %d times, want at least 2 (each pause)", s.Parked)
	}
}

// TestProxyProtocolUntrusted: a peer outside the networks is served
// without a header (its own address), and a PROXY line from it is a bad
// keptRequest.
func TestProxyProtocolUntrusted(t *testing.T) {
	for _, mode := range [][]string{{"--accept", "exclusive"}, {"--accept-filter", "http"}} {
		t.Run(mode[len(mode)-1], func(t *testing.T) {
			addr := freeAddr(t)
			startActd(t, nil, append([]string{"--listen", "web=" + addr, "--proxy-protocol-from", "10.0.0.0/8"}, mode...)...)
			if bodies, _ := talk(t, addr, 1, keptRequest); len(bodies) != 1 || !strings.Contains(bodies[0], "client=127.0.0.1:") {
				t.Errorf("plain keptRequest: %q, want 200 with client=127.0.0.1", bodies)
			}
			if bodies, _ := talk(t, addr, 1, proxyV1+keptRequest); len(bodies) != 1 || !strings.HasPrefix(bodies[0], "400 ") {
				t.Errorf("PROXY line from an untrusted peer: %q, want 400", bodies)
			}
		})
	}
}

// TestProxyProtocolLate: a header not whole within --hold-timeout closes
// the connection without an answer, counted in the status.
func TestProxyProtocolLate(t *testing.T) {
	addr := freeAddr(t)
	a := startActd(t, nil, "--listen", "web="+addr, "--proxy-protocol-from", "127.0.0.1/32", "--accept-filter", "http", "--hold-timeout", "200ms")
	if bodies, silent := talk(t, addr, 1, proxyV1[:20], longPause, proxyV1[20:]+keptRequest); !silent {
		t.Errorf("got %q, want the connection closed without an answer", bodies)
	}
	waitFor(t, "the late header counted", 10*time.Second, func() bool {
		h := a.status(t).Snapshot.Held
		return h != nil && h.ProxyFailed >= 1
	})
	if !strings.Contains(a.stderr.String(), "event=proxy") {
		t.Errorf("no proxy event in the log:\n%s", a.stderr)
	}
}

// TestProxyProtocolNeedsWorker: a worker that does not announce proxy
// stops actd at its hello with exit status 78, naming the flag.
func TestProxyProtocolNeedsWorker(t *testing.T) {
	args := []string{"--listen", "unix:" + filepath.Join(t.TempDir(), "s"), "--proxy-protocol-from", "10.0.0.0/8", "--", os.Args[0], oldArg}
	checkRefused(t, args, "proxy-protocol-from", "does not read PROXY protocol headers")
}

// TestProxyProtocolStatus: a request that lasts shows its client, from the
// PROXY header, in actd status and in the slow-request log line.
func TestProxyProtocolStatus(t *testing.T) {
	addr := freeAddr(t)
	a := startActd(t, nil, "--listen", "web="+addr, "--proxy-protocol-from", "web=127.0.0.1", "--accept", "exclusive",
		"--handler-delay", "2s", "--slow-request", "300ms")
	done := make(chan []string, 1)
	go func() {
		bodies, _ := talk(t, addr, 1, proxyV1+keptRequest)
		done <- bodies
	}()
	const want = "GET / from 203.0.113.7:5555"
	waitFor(t, "the request in actd status", 10*time.Second, func() bool {
		for _, sl := range a.status(t).Snapshot.Slots {
			if sl.Request == want {
				return true
			}
		}
		return false
	})
	if bodies := <-done; len(bodies) != 1 || !strings.Contains(bodies[0], "client=203.0.113.7:5555") {
		t.Errorf("got %q, want the client in the answer", bodies)
	}
	waitFor(t, "the slow-request line", 10*time.Second, func() bool {
		return strings.Contains(a.stderr.String(), `request="`+want+`"`)
	})
}

// remoteArg makes the test binary a net/http server on worker.Listener
// that answers each request with its Request.RemoteAddr.
const remoteArg = "remote-addr-worker"

func remoteAddrWorker() int {
	l, err := worker.Listener()
	if err != nil {
		return 1
	}
	srv := &http.Server{IdleTimeout: 2 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "remote="+r.RemoteAddr+"\n")
	})}
	if err := srv.Serve(l); !errors.Is(err, net.ErrClosed) {
		return 1
	}
	return 0
}

// TestProxyProtocolNetHTTP: net/http on worker.Listener sees the client
// of the PROXY header in Request.RemoteAddr, in a child that accepts
// itself and in one handed the connection by the master.
func TestProxyProtocolNetHTTP(t *testing.T) {
	for _, mode := range [][]string{{"--accept", "exclusive"}, {"--accept-filter", "http"}} {
		t.Run(mode[len(mode)-1], func(t *testing.T) {
			addr := freeAddr(t)
			startActd(t, nil, append(append([]string{"--listen", "web=" + addr, "--proxy-protocol-from", "127.0.0.1"}, mode...),
				"--", os.Args[0], remoteArg)...)
			bodies, _ := talk(t, addr, 2, proxyV1, pause, keptRequest, pause, keptRequest)
			if len(bodies) != 2 {
				t.Fatalf("got %q, want 2 answers", bodies)
			}
			for _, b := range bodies {
				if b != "200 OK remote=203.0.113.7:5555" {
					t.Errorf("got %q, want the client from the header", b)
				}
			}
		})
	}
}

// TestProxyProtocolExec: a program run per connection (--exec) gets the
// connection after its header, and the client in REMOTE_ADDR and
// REMOTE_PORT.
func TestProxyProtocolExec(t *testing.T) {
	addr := freeAddr(t)
	startActd(t, nil, "--listen", "web="+addr, "--proxy-protocol-from", "web=127.0.0.1", "--accept", "exclusive",
		"--exec", `/bin/sh -c 'read line; printf "HTTP/1.0 200 OK\r\n\r\n%s %s:%s\n" "${line%?}" "$REMOTE_ADDR" "$REMOTE_PORT"'`)
	bodies, _ := talk(t, addr, 1, proxyV1+"GET / HTTP/1.0\r\n\r\n")
	if len(bodies) != 1 || bodies[0] != "200 OK GET / HTTP/1.0 203.0.113.7:5555" {
		t.Errorf("got %q, want the request line after the header and the client", bodies)
	}
}
