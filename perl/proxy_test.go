package perl_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// proxyV2 returns a v2 PROXY header (command PROXY, TCP over IPv4 or
// IPv6) for a client at src.
func proxyV2(src netip.AddrPort) []byte {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21")
	ip := src.Addr().AsSlice()
	dst := make([]byte, len(ip))
	if src.Addr().Is4() {
		b = append(b, 0x11)
	} else {
		b = append(b, 0x21)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(2*len(ip)+4))
	b = append(append(b, ip...), dst...)
	b = binary.BigEndian.AppendUint16(b, src.Port())
	return binary.BigEndian.AppendUint16(b, 80)
}

// TestProxyProtocol runs the handler under a real actd in dispatch and
// exclusive mode with ACTD_PROXY_FROM trusting 127.0.0.0/8 on listener 0
// (docs/perl.md, "PROXY protocol"; set in the worker's command, as a
// revision-6 master sets it): a v1 or v2 header, whole or in pieces, gives
// REMOTE_ADDR and REMOTE_PORT; v1 UNKNOWN keeps the peer; a malformed
// header, or an HTTP request without one, is closed unanswered. With
// ACTD_FORWARDED_ALLOW_IPS trusting the proxied client too, X-Forwarded-For
// and X-Forwarded-Proto are followed.
func TestProxyProtocol(t *testing.T) {
	get := "GET /client HTTP/1.1\r\nHost: x\r\n\r\n"
	cases := []struct {
		name   string
		pieces []string
		want   string // the body; "" for a connection closed unanswered
	}{
		{"v1 TCP4", []string{"PROXY TCP4 192.0.2.1 198.51.100.2 40000 80\r\n" + get}, "192.0.2.1 40000 http\n"},
		{"v1 TCP6", []string{"PROXY TCP6 2001:db8::1 2001:db8::2 5555 80\r\n" + get}, "2001:db8::1 5555 http\n"},
		{"v1 in pieces", []string{"PROXY TCP4 192.0.2", ".9 198.51.100.2 1234 80\r", "\n" + get}, "192.0.2.9 1234 http\n"},
		{"v1 UNKNOWN", []string{"PROXY UNKNOWN\r\n" + get}, "127.0.0.1 "},
		{"v2 TCP4", []string{string(proxyV2(netip.MustParseAddrPort("203.0.113.5:61000"))) + get}, "203.0.113.5 61000 http\n"},
		{"v2 TCP6 in pieces", []string{string(proxyV2(netip.MustParseAddrPort("[2001:db8::7]:443")))[:20], string(proxyV2(netip.MustParseAddrPort("[2001:db8::7]:443")))[20:] + get}, "2001:db8::7 443 http\n"},
		{"malformed", []string{"PROXY TCP4 nonsense\r\n" + get}, ""},
		{"none from a trusted peer", []string{get}, ""},
		{"forwarded", []string{"PROXY TCP4 192.0.2.1 198.51.100.2 40000 80\r\nGET /client HTTP/1.1\r\nHost: x\r\n" +
			"X-Forwarded-For: 203.0.113.9, 192.0.2.200\r\nX-Forwarded-Proto: https\r\n\r\n"}, "203.0.113.9 - https\n"},
	}
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) {
			p := startPoolWith(t, []string{"env", "ACTD_PROXY_FROM=0=127.0.0.0/8", "ACTD_FORWARDED_ALLOW_IPS=192.0.2.0/24"},
				mode, "app.psgi", "--start-children", "2", "--min-children", "2", "--max-children", "2")
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					got, err := proxyExchange(p.addr, tc.pieces)
					if tc.want == "" {
						if err == nil {
							t.Errorf("got %q, want the connection closed unanswered", got)
						}
						return
					}
					if err != nil || !strings.HasPrefix(got, tc.want) {
						t.Errorf("got %q, %v; want %q", got, err, tc.want)
					}
				})
			}
		})
	}
}

// proxyExchange sends pieces to addr, 50 ms apart, and returns the body of
// the answer.
func proxyExchange(addr string, pieces []string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, ioBound)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioBound))
	for i, piece := range pieces {
		if i > 0 {
			time.Sleep(50 * time.Millisecond) // pieces apart, the thing tested
		}
		if _, err := io.WriteString(conn, piece); err != nil {
			return "", err
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(body), fmt.Errorf("status %s", resp.Status)
	}
	return string(body), err
}
