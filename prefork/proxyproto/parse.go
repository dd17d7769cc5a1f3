package proxyproto

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strconv"
	"unsafe"
)

// Status is what Parse found in the bytes it was given.
type Status uint8

const (
	NeedMore Status = iota // a header's beginning: wait for more bytes
	Complete               // a whole header: Header.Len bytes
	Invalid                // a malformed header: close the connection
	Absent                 // bytes that start no header at all (a request): from a trusted peer, close it too
)

var statusNames = []string{"need-more", "complete", "invalid", "absent"}

// String names s.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// Limits of a header: a v1 line (CRLF included), and a v2 header (its
// 16 fixed bytes and at most MaxV2Body more).
const (
	MaxV1     = 107
	v2Fixed   = 16
	MaxV2Body = 1024
	MaxHeader = v2Fixed + MaxV2Body // the longest header Parse accepts
)

// signature starts every v2 header.
var signature = []byte("\r\n\r\n\x00\r\nQUIT\n")

// v1Prefix starts every v1 header.
var v1Prefix = []byte("PROXY ")

// Header is a complete header.
type Header struct {
	Len  int            // its length in bytes: what to read before the request
	Addr netip.AddrPort // the client's address; the zero value: keep the socket's peer
}

// Parse reads a header at the start of b, the bytes peeked so far. It
// returns the header and Complete; NeedMore when b is empty or a header's
// beginning that may still complete (shorter than MaxV1, or than the v2
// length it gives); Invalid when b starts with no header or a malformed
// one (a v1 line longer than MaxV1, a v2 body longer than MaxV2Body, a
// version other than 2, a command other than LOCAL and PROXY, addresses
// shorter than their family needs, a v1 field out of place); Absent when
// b starts neither with "PROXY " nor with the v2 signature (nor with a
// part of either). It allocates nothing for a valid header (a v1
// destination address with a zone aside), nor for most invalid ones.
func Parse(b []byte) (Header, Status) {
	if len(b) == 0 {
		return Header{}, NeedMore
	}
	if v1, _ := isPrefix(b, v1Prefix); v1 {
		return parseV1(b)
	}
	if v2, _ := isPrefix(b, signature); v2 {
		return parseV2(b)
	}
	return Header{}, Absent
}

// isPrefix reports whether b is a beginning of want, or starts with all of
// it (full).
func isPrefix(b, want []byte) (prefix, full bool) {
	if len(b) < len(want) {
		return bytes.HasPrefix(want, b), false
	}
	return bytes.HasPrefix(b, want), true
}

// parseV1 parses "PROXY TCP4|TCP6|UNKNOWN ...\r\n" in place: fields cut
// at each space, addresses read by netip.ParseAddr from the bytes without
// a copy (v1Addr), no allocation for a valid line.
func parseV1(b []byte) (Header, Status) {
	if _, full := isPrefix(b, v1Prefix); !full {
		return Header{}, NeedMore
	}
	end := bytes.Index(b[:min(len(b), MaxV1)], crlf)
	if end < 0 {
		if len(b) >= MaxV1 || bytes.IndexByte(b, '\n') >= 0 {
			return Header{}, Invalid
		}
		return Header{}, NeedMore
	}
	h := Header{Len: end + 2}
	proto, rest, _ := bytes.Cut(b[len(v1Prefix):end], space)
	switch {
	case string(proto) == "UNKNOWN":
		return h, Complete // anything may follow, up to the CRLF
	case string(proto) != "TCP4" && string(proto) != "TCP6":
		return Header{}, Invalid
	}
	var f [4][]byte // source, destination, their ports: exactly four fields
	for i := range f {
		var more bool
		f[i], rest, more = bytes.Cut(rest, space)
		if more != (i < len(f)-1) {
			return Header{}, Invalid
		}
	}
	v4 := string(proto) == "TCP4"
	src, ok1 := v1Addr(f[0], false)
	dst, ok2 := v1Addr(f[1], true)
	sport, ok3 := v1Port(f[2])
	_, ok4 := v1Port(f[3])
	if !ok1 || !ok2 || !ok3 || !ok4 || src.Is4() != v4 || dst.Is4() != v4 {
		return Header{}, Invalid
	}
	h.Addr = netip.AddrPortFrom(src, sport)
	return h, Complete
}

// crlf ends a v1 line; space separates its fields.
var crlf, space = []byte("\r\n"), []byte(" ")

// v1Addr parses an address field as netip.ParseAddr does. A zone (fe80::1%eth0)
// is refused for the source, and taken for the destination as
// netip.ParseAddr takes it, from a copy (the one case that allocates).
// Else netip.ParseAddr reads b itself, through a string that shares its
// bytes: it keeps no part of a zone-less input once it returns (an error
// holding it is dropped here).
func v1Addr(b []byte, zoned bool) (netip.Addr, bool) {
	if len(b) == 0 {
		return netip.Addr{}, false
	}
	if bytes.IndexByte(b, '%') >= 0 {
		if !zoned {
			return netip.Addr{}, false
		}
		a, err := netip.ParseAddr(string(b))
		return a, err == nil
	}
	a, err := netip.ParseAddr(unsafe.String(&b[0], len(b)))
	return a, err == nil
}

// v1Port parses a decimal port, 0 to 65535, without a sign or leading zero.
func v1Port(b []byte) (uint16, bool) {
	if len(b) == 0 || len(b) > 5 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return uint16(n), n <= 65535
}

// parseV2 parses the binary header.
func parseV2(b []byte) (Header, Status) {
	if _, full := isPrefix(b, signature); !full {
		return Header{}, NeedMore
	}
	if len(b) >= 13 && b[12]&0xf0 != 0x20 || len(b) >= 13 && b[12]&0x0f > 1 {
		return Header{}, Invalid // version 2 only; LOCAL (0) or PROXY (1)
	}
	if len(b) < v2Fixed {
		return Header{}, NeedMore
	}
	body := int(binary.BigEndian.Uint16(b[14:16]))
	if body > MaxV2Body {
		return Header{}, Invalid
	}
	h := Header{Len: v2Fixed + body}
	if len(b) < h.Len {
		return Header{}, NeedMore
	}
	if b[12]&0x0f == 0 {
		return h, Complete // LOCAL: a health check, the peer is the balancer
	}
	addrs := b[v2Fixed:h.Len]
	switch b[13] {
	case 0x11: // TCP over IPv4: src, dst, sport, dport
		if len(addrs) < 12 {
			return Header{}, Invalid
		}
		h.Addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte(addrs[:4])), binary.BigEndian.Uint16(addrs[8:10]))
	case 0x21: // TCP over IPv6
		if len(addrs) < 36 {
			return Header{}, Invalid
		}
		h.Addr = netip.AddrPortFrom(netip.AddrFrom16([16]byte(addrs[:16])), binary.BigEndian.Uint16(addrs[32:34]))
	}
	return h, Complete // any other family: as LOCAL; TLVs skipped
}
