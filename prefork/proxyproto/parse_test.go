package proxyproto

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// v2 builds a v2 header: command (0 LOCAL, 1 PROXY), family byte, body.
func v2(cmd, family byte, body []byte) []byte {
	b := append([]byte(nil), signature...)
	b = append(b, 0x20|cmd, family, 0, 0)
	binary.BigEndian.PutUint16(b[14:], uint16(len(body)))
	return append(b, body...)
}

// inet4 is a TCP4 body: src, dst, sport, dport, then tlvs.
func inet4(src, dst string, sport, dport uint16, tlvs ...byte) []byte {
	b := append(netip.MustParseAddr(src).AsSlice(), netip.MustParseAddr(dst).AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, sport)
	b = binary.BigEndian.AppendUint16(b, dport)
	return append(b, tlvs...)
}

// inet6 is a TCP6 body.
func inet6(src, dst string, sport, dport uint16) []byte {
	b := append(netip.MustParseAddr(src).AsSlice(), netip.MustParseAddr(dst).AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, sport)
	return binary.BigEndian.AppendUint16(b, dport)
}

// TestParse: the examples of HAProxy's doc/proxy-protocol.txt and its
// limits, each whole, then every proper prefix of a complete one is
// NeedMore.
func TestParse(t *testing.T) {
	const worstV1 = "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n"
	tlv := []byte{0x04, 0x00, 0x03, 'a', 'b', 'c'} // PP2_TYPE_NOOP, skipped
	for _, tc := range []struct {
		name string
		in   string
		want Status
		len  int
		addr string // "" for none
	}{
		{"v1 TCP4", "PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\nGET / HTTP/1.1\r\n", Complete, 47, "192.168.0.1:56324"},
		{"v1 TCP6", "PROXY TCP6 2001:db8::1 2001:db8::2 443 8443\r\n", Complete, 45, "[2001:db8::1]:443"},
		{"v1 worst case, 104 bytes", worstV1, Complete, len(worstV1), "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"},
		{"v1 UNKNOWN", "PROXY UNKNOWN\r\n", Complete, 15, ""},
		{"v1 UNKNOWN with addresses", "PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n", Complete, 59, ""},
		{"v1 beginning", "PROX", NeedMore, 0, ""},
		{"v1 without CRLF yet", "PROXY TCP4 192.168.0.1 192.168.0.11 56324", NeedMore, 0, ""},
		{"v1 too long", "PROXY UNKNOWN " + strings.Repeat("x", 100), Invalid, 0, ""},
		{"v1 CRLF past 107 bytes", "PROXY UNKNOWN " + strings.Repeat("x", 93) + "\r\n", Invalid, 0, ""},
		{"v1 bare LF", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", Invalid, 0, ""},
		{"v1 TCP4 with IPv6", "PROXY TCP4 2001:db8::1 2001:db8::2 1 2\r\n", Invalid, 0, ""},
		{"v1 TCP6 with IPv4", "PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n", Invalid, 0, ""},
		{"v1 port too big", "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", Invalid, 0, ""},
		{"v1 port leading zero", "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n", Invalid, 0, ""},
		{"v1 two spaces", "PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n", Invalid, 0, ""},
		{"v1 missing field", "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", Invalid, 0, ""},
		{"v1 UDP4", "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", Invalid, 0, ""},
		{"v1 lower case", "proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n", Absent, 0, ""},
		{"an HTTP request", "GET / HTTP/1.1\r\n\r\n", Absent, 0, ""},
		{"a POST", "POST / HTTP/1.1\r\n\r\n", Absent, 0, ""},
		{"nothing yet", "", NeedMore, 0, ""},
		{"PROXY then garbage", "PROXYGET", Absent, 0, ""},
		{"leading CRLF then a request", "\r\nGET / HTTP/1.1\r\n\r\n", Absent, 0, ""},
		{"v2 PROXY TCP4", string(v2(1, 0x11, inet4("203.0.113.7", "192.0.2.1", 5555, 80))), Complete, 28, "203.0.113.7:5555"},
		{"v2 PROXY TCP4 with a TLV", string(v2(1, 0x11, inet4("203.0.113.7", "192.0.2.1", 5555, 80, tlv...))) + "GET", Complete, 34, "203.0.113.7:5555"},
		{"v2 PROXY TCP6", string(v2(1, 0x21, inet6("2001:db8::7", "2001:db8::1", 443, 80))), Complete, 52, "[2001:db8::7]:443"},
		{"v2 LOCAL", string(v2(0, 0x00, nil)), Complete, 16, ""},
		{"v2 LOCAL with addresses", string(v2(0, 0x11, inet4("203.0.113.7", "192.0.2.1", 5555, 80))), Complete, 28, ""},
		{"v2 UDP4: as LOCAL", string(v2(1, 0x12, inet4("203.0.113.7", "192.0.2.1", 5555, 80))), Complete, 28, ""},
		{"v2 UNIX: as LOCAL", string(v2(1, 0x31, make([]byte, 216))), Complete, 232, ""},
		{"v2 UNSPEC: as LOCAL", string(v2(1, 0x00, nil)), Complete, 16, ""},
		{"v2 largest", string(v2(1, 0x11, make([]byte, MaxV2Body))), Complete, MaxHeader, "0.0.0.0:0"},
		{"v2 body too long", string(v2(1, 0x11, make([]byte, MaxV2Body+1))), Invalid, 0, ""},
		{"v2 TCP4 too short", string(v2(1, 0x11, make([]byte, 11))), Invalid, 0, ""},
		{"v2 TCP6 too short", string(v2(1, 0x21, make([]byte, 35))), Invalid, 0, ""},
		{"v2 version 1", string(signature) + "\x11\x11\x00\x00", Invalid, 0, ""},
		{"v2 command 2", string(signature) + "\x22\x00\x00\x00", Invalid, 0, ""},
		{"v2 bad signature", "\r\n\r\n\x00\r\nQUIX\n\x21\x11\x00\x0c", Absent, 0, ""},
		{"v2 signature only", string(signature), NeedMore, 0, ""},
		{"v2 body not in", string(v2(1, 0x11, inet4("203.0.113.7", "192.0.2.1", 5555, 80))[:20]), NeedMore, 0, ""},
		{"a CR then garbage", "\rX", Absent, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, got := Parse([]byte(tc.in))
			if got != tc.want || h.Len != tc.len {
				t.Fatalf("got %v, %d bytes; want %v, %d bytes", got, h.Len, tc.want, tc.len)
			}
			addr := ""
			if h.Addr.IsValid() {
				addr = h.Addr.String()
			}
			if addr != tc.addr {
				t.Errorf("address %q, want %q", addr, tc.addr)
			}
			if got != Complete {
				return
			}
			for i := range h.Len {
				if _, st := Parse([]byte(tc.in[:i])); st != NeedMore {
					t.Fatalf("the first %d bytes: %v, want %v", i, st, NeedMore)
				}
			}
		})
	}
}
