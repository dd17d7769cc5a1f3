package edgeclient

import (
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// The PROXY protocol checks a worker kind passes behind a trusted peer.

// CheckProxy runs Cases against addr, a pool that trusts 127.0.0.1 for
// PROXY headers, one subtest each; scheme is what every answer names
// ("http" or "https"), and roots, when not nil, makes each conversation
// PROXY then TLS (the header first, then the handshake, then the rest).
func CheckProxy(t *testing.T, addr string, roots *x509.CertPool) {
	t.Helper()
	for _, tc := range Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			parts, scheme := tc.Parts, "http"
			c, err := Dial(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if roots != nil {
				parts, scheme = proxyThenTLS(t, c, roots, parts), "https"
			}
			bodies, err := c.Talk(parts...)
			if err != nil {
				t.Fatalf("got %q, %v", bodies, err)
			}
			if err := Check(bodies, parts, tc.Want); err != nil {
				t.Error(err)
			}
			for _, b := range bodies {
				if !hasScheme(b, scheme) {
					t.Errorf("got %q, want %s", b, scheme)
				}
			}
		})
	}
}

// proxyThenTLS sends, on c, the parts up to and including the PROXY
// header (the first part that does not end a request, or the header alone
// if the first part carries a request too), does the TLS handshake, and
// returns the parts left to send over TLS.
func proxyThenTLS(t *testing.T, c *Conn, roots *x509.CertPool, parts []string) []string {
	t.Helper()
	var rest []string
	for i, p := range parts {
		if j := strings.Index(p, "GET "); j >= 0 {
			rest = append([]string{p[j:]}, parts[i+1:]...)
			p = p[:j]
		}
		if _, err := c.Talk(p); err != nil {
			t.Fatal(err)
		}
		if rest != nil {
			break
		}
	}
	if err := c.StartTLS(roots); err != nil {
		t.Fatal(err)
	}
	return rest
}

// CheckUntrusted: on addr, a pool that trusts only 10.0.0.0/8, a plain
// request is answered with the peer's own address, and a request after a
// PROXY line gets 400 (the line is just a bad request).
func CheckUntrusted(t *testing.T, addr string) {
	t.Helper()
	bodies, err := Talk(addr, Request)
	if err != nil || len(bodies) != 1 || !strings.HasPrefix(bodies[0], "200 OK 127.0.0.1 ") {
		t.Errorf("plain request: got %q, %v; want 200 from 127.0.0.1", bodies, err)
	}
	bodies, err = Talk(addr, V1("203.0.113.7:5555")+Request)
	if len(bodies) == 0 || !strings.HasPrefix(bodies[0], "400 ") {
		t.Errorf("PROXY line from an untrusted peer: got %q, %v; want 400", bodies, err)
	}
}

// CheckAtOnce: under an accept filter whose children accept first, PROXY
// headers sent with their request (v1 and v2, ten each) are served by the
// children with no handoff: handoffs (the master's count of C) does not
// grow.
func CheckAtOnce(t *testing.T, addr string, handoffs func() (uint64, error)) {
	t.Helper()
	before, err := handoffs()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		head, want := V1("203.0.113.7:5555"), "203.0.113.7 5555"
		if i%2 == 1 {
			head, want = V2("[2001:db8::7]:443"), "2001:db8::7 443"
		}
		parts := []string{head + Request}
		bodies, err := Talk(addr, parts...)
		if err == nil {
			err = Check(bodies, parts, want)
		}
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	if after, err := handoffs(); err != nil || after != before {
		t.Errorf("handoffs: got %d more (%v), want none: the children serve what is ready", after-before, err)
	}
}

// CheckRefused: from a trusted peer, a malformed PROXY header, or a
// request without one, is closed without an answer.
func CheckRefused(t *testing.T, addr string) {
	t.Helper()
	for _, tc := range []struct{ name, sent string }{
		{"malformed", "PROXY TCP4 203.0.113.7 nowhere 5555 80\r\n" + Request},
		{"none", Request},
	} {
		if bodies, err := Talk(addr, tc.sent); len(bodies) != 0 || err == nil {
			t.Errorf("%s: got %q, %v; want the connection closed without an answer", tc.name, bodies, err)
		}
	}
}

// CheckForwarded: on addr, a pool whose adapter trusts X-Forwarded-* from
// 203.0.113.0/24 (--forwarded-allow-ips), a request behind a PROXY header
// from 203.0.113.7 names the rightmost untrusted X-Forwarded-For entry and
// follows X-Forwarded-Proto; behind one from 192.0.2.9 (not trusted) the
// headers are ignored.
func CheckForwarded(t *testing.T, addr string) {
	t.Helper()
	req := "GET /client HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 198.51.100.1, 198.51.100.9, 203.0.113.8\r\n" +
		"X-Forwarded-Proto: https\r\n\r\n"
	for _, tc := range []struct{ src, want, scheme string }{
		{"203.0.113.7:5555", "198.51.100.9 ", "https"},
		{"192.0.2.9:5555", "192.0.2.9 5555", "http"},
	} {
		parts := []string{V1(tc.src) + req}
		bodies, err := Talk(addr, parts...)
		if err == nil {
			err = Check(bodies, parts, tc.want)
		}
		if err != nil || !hasScheme(bodies[0], tc.scheme) {
			t.Errorf("PROXY from %s: got %q, %v; want %q, %s", tc.src, bodies, err, tc.want, tc.scheme)
		}
	}
}

// CheckReported: a request for target (one that lasts until release, or
// a while) behind a v1 header from 203.0.113.7:5555 is shown by the master
// as want, "METHOD PATH from 203.0.113.7:5555" (the worker's R report):
// shows waits until some child's request is want. It is answered once
// released.
func CheckReported(t *testing.T, addr, target, want string, shows func(string) error, release func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		parts := []string{V1("203.0.113.7:5555") + "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n"}
		bodies, err := Talk(addr, parts...)
		if err == nil && (len(bodies) != 1 || !strings.HasPrefix(bodies[0], "200 ")) {
			err = fmt.Errorf("got %q, want one 200 answer", bodies)
		}
		done <- err
	}()
	err := shows(want)
	release()
	if err != nil {
		t.Errorf("actd status: %v", err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// CheckAccessLog: requests behind v1 and v2 headers (at once, and the
// header then a wait) are logged in file (an access log of the default
// format) with the header's client as %h, one line each.
func CheckAccessLog(t *testing.T, addr, file string) {
	t.Helper()
	v1, v2 := V1("203.0.113.7:5555"), V2("[2001:db8::7]:443")
	for _, parts := range [][]string{{v1 + Request}, {v2 + Request}, {v1, Pause, Request}} {
		if bodies, err := Talk(addr, parts...); err != nil || len(bodies) != 1 {
			t.Fatalf("got %q, %v; want an answer", bodies, err)
		}
	}
	want := []string{"203.0.113.7 - - [", "2001:db8::7 - - [", "203.0.113.7 - - ["}
	deadline := time.Now().Add(Bound)
	for {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
		if len(lines) >= len(want) || time.Now().After(deadline) {
			slices.Sort(lines)
			slices.Sort(want)
			for i := range want {
				if i >= len(lines) || !strings.HasPrefix(lines[i], want[i]) {
					t.Errorf("access log: got %q, want lines starting %q", lines, want)
					break
				}
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
