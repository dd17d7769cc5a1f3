// Package edgeclient is the client side of the edge tests (issue 24): it
// writes PROXY protocol headers, v1 and v2, and talks HTTP to a pool over
// a plain or TLS connection in timed parts, so that a test can steer a
// connection down each path a master and its children offer (served at
// once, held, split, parked keep-alive).
package edgeclient

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Bound is how long one conversation may take; not a speed assertion.
const Bound = 30 * time.Second

// Pause, among a conversation's parts, waits 300 ms before the next.
const Pause = "<pause>"

// Request is a keep-alive HTTP/1.1 GET of /client.
const Request = "GET /client HTTP/1.1\r\nHost: localhost\r\n\r\n"

// V1 returns a v1 header (TCP4 or TCP6) from src to port 80.
func V1(src string) string {
	ap := netip.MustParseAddrPort(src)
	if ap.Addr().Is4() {
		return fmt.Sprintf("PROXY TCP4 %s 192.0.2.1 %d 80\r\n", ap.Addr(), ap.Port())
	}
	return fmt.Sprintf("PROXY TCP6 %s 2001:db8::1 %d 80\r\n", ap.Addr(), ap.Port())
}

// V2 returns a v2 PROXY header from src (TCP over IPv4 or IPv6) to port
// 80, with one TLV that a reader skips.
func V2(src string) string {
	ap := netip.MustParseAddrPort(src)
	b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21")
	ip := ap.Addr().AsSlice()
	if ap.Addr().Is4() {
		b = append(b, 0x11)
	} else {
		b = append(b, 0x21)
	}
	body := append(append([]byte{}, ip...), make([]byte, len(ip))...)
	body = binary.BigEndian.AppendUint16(body, ap.Port())
	body = binary.BigEndian.AppendUint16(body, 80)
	body = append(body, 0x04, 0, 2, 'x', 'y')
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return string(append(b, body...))
}

// V2Local is a v2 LOCAL header (a balancer's health check): the peer
// keeps its own address.
const V2Local = "\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00"

// Conn is one client connection: plain, or TLS on top of a raw one.
type Conn struct {
	Raw net.Conn
	rw  io.ReadWriter
	r   *bufio.Reader
}

// Dial connects to addr (TCP) with Bound as its deadline. It returns the
// dial's error.
func Dial(addr string) (*Conn, error) {
	raw, err := net.DialTimeout("tcp", addr, Bound)
	if err != nil {
		return nil, err
	}
	raw.SetDeadline(time.Now().Add(Bound))
	return &Conn{Raw: raw, rw: raw, r: bufio.NewReader(raw)}, nil
}

// StartTLS does a TLS handshake over c (after whatever c sent already,
// such as a PROXY header), trusting roots for localhost; from then on
// Talk speaks TLS. It returns the handshake's error.
func (c *Conn) StartTLS(roots *x509.CertPool) error {
	tc := tls.Client(c.Raw, &tls.Config{RootCAs: roots, ServerName: "localhost", NextProtos: []string{"http/1.1"}})
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	c.rw, c.r = tc, bufio.NewReader(tc)
	return nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.Raw.Close() }

// Talk sends parts (waiting at each Pause) and, after each part that ends
// a request head, reads one response. It returns each response's status
// and body ("200 OK BODY", the body trimmed), and an error if a write or
// a read failed; a connection closed before any answer gives no bodies and
// an error.
func (c *Conn) Talk(parts ...string) ([]string, error) {
	var bodies []string
	for _, p := range parts {
		if p == Pause {
			time.Sleep(300 * time.Millisecond) // a client that pauses: the thing tested
			continue
		}
		if _, err := io.WriteString(c.rw, p); err != nil {
			return bodies, fmt.Errorf("write: %w", err)
		}
		if !strings.HasSuffix(p, "\r\n\r\n") {
			continue
		}
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			return bodies, fmt.Errorf("answer %d: %w", len(bodies)+1, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return bodies, fmt.Errorf("answer %d body: %w", len(bodies)+1, err)
		}
		bodies = append(bodies, resp.Status+" "+strings.TrimSpace(string(b)))
	}
	return bodies, nil
}

// Talk dials addr and talks parts on a plain connection; see Conn.Talk.
func Talk(addr string, parts ...string) ([]string, error) {
	c, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Talk(parts...)
}

// Case is one conversation of Cases: parts sent, and what every answer's
// body must hold (answers counted by the requests in parts).
type Case struct {
	Name  string
	Parts []string
	Want  string
}

// Cases are the PROXY conversations every worker kind must answer with the
// client's address, from a trusted peer: v1 and v2 whole with the
// request, the header then (after a pause) the request, a header in two
// parts, a second request after a pause (parked keep-alive under a
// filter), and LOCAL (want holds the real peer, 127.0.0.1). want is
// written "HOST PORT" as the test apps print REMOTE_ADDR and REMOTE_PORT.
func Cases() []Case {
	v1 := V1("203.0.113.7:5555")
	v2 := V2("[2001:db8::7]:443")
	const a1, a2 = "203.0.113.7 5555", "2001:db8::7 443"
	return []Case{
		{"v1 at once", []string{v1 + Request}, a1},
		{"v2 at once", []string{v2 + Request}, a2},
		{"v1, wait, request", []string{v1, Pause, Request}, a1},
		{"v2, wait, request", []string{v2, Pause, Request}, a2},
		{"v1 in two parts", []string{v1[:11], Pause, v1[11:] + Request}, a1},
		{"v2 in two parts", []string{v2[:9], Pause, v2[9:] + Request}, a2},
		{"v1 keep-alive", []string{v1 + Request, Pause, Request}, a1},
		{"v2 keep-alive", []string{v2 + Request, Pause, Request}, a2},
		{"v2 LOCAL", []string{V2Local + Request}, "127.0.0.1 "},
		{"v2 LOCAL, wait, request", []string{V2Local, Pause, Request}, "127.0.0.1 "},
		{"v1 UNKNOWN", []string{"PROXY UNKNOWN\r\n" + Request}, "127.0.0.1 "},
	}
}

// Check returns nil if bodies are one 200 answer per request in parts,
// each holding want, or an error saying what differs.
func Check(bodies []string, parts []string, want string) error {
	n := 0
	for _, p := range parts {
		if strings.HasSuffix(p, "\r\n\r\n") {
			n++
		}
	}
	if len(bodies) != n {
		return fmt.Errorf("got %q, want %d answers", bodies, n)
	}
	for i, b := range bodies {
		if !strings.HasPrefix(b, "200 OK ") || !strings.Contains(b, want) {
			return fmt.Errorf("answer %d: got %q, want 200 with %q", i+1, b, want)
		}
	}
	return nil
}
