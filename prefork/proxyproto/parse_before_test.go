package proxyproto

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
)

// parseV1Before is parseV1 as it was before it parsed in place (commit
// bdac768: bytes.Split, netip.ParseAddr on copies, 3 allocations): the
// reference the generated lines are checked against.
func parseV1Before(b []byte) (Header, Status) {
	if _, full := isPrefix(b, v1Prefix); !full {
		return Header{}, NeedMore
	}
	end := bytes.Index(b[:min(len(b), MaxV1)], []byte("\r\n"))
	if end < 0 {
		if len(b) >= MaxV1 || bytes.IndexByte(b, '\n') >= 0 {
			return Header{}, Invalid
		}
		return Header{}, NeedMore
	}
	h := Header{Len: end + 2}
	fields := bytes.Split(b[len(v1Prefix):end], []byte(" "))
	switch string(fields[0]) {
	case "UNKNOWN":
		return h, Complete
	case "TCP4", "TCP6":
	default:
		return Header{}, Invalid
	}
	if len(fields) != 5 {
		return Header{}, Invalid
	}
	src, err1 := netip.ParseAddr(string(fields[1]))
	dst, err2 := netip.ParseAddr(string(fields[2]))
	sport, ok1 := v1Port(fields[3])
	_, ok2 := v1Port(fields[4])
	v4 := string(fields[0]) == "TCP4"
	if err1 != nil || err2 != nil || !ok1 || !ok2 || src.Is4() != v4 || dst.Is4() != v4 || src.Zone() != "" {
		return Header{}, Invalid
	}
	h.Addr = netip.AddrPortFrom(src, sport)
	return h, Complete
}

// v1Lines generates v1 lines: every protocol, address and port of the
// lists below in each place, field counts and spacings around them, then
// each of those mutated (a byte replaced, dropped or doubled) by a seeded
// generator.
func v1Lines() []string {
	protos := []string{"TCP4", "TCP6", "UNKNOWN", "UDP4", "tcp4", "TCP", "", "UNKNOWNX"}
	addrs := []string{"127.0.0.1", "203.0.113.7", "255.255.255.255", "0.0.0.0", "1.2.3", "1.2.3.4.5", "01.2.3.4",
		"1.2.3.256", "1..2.3", "::1", "2001:db8::7", "::ffff:1.2.3.4", "fe80::1%eth0", "fe80::1%", "1:2:3:4:5:6:7:8",
		"1:2:3:4:5:6:7:8:9", "12345::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::", "x", "", "1.2.3.4%z"}
	ports := []string{"0", "1", "80", "65535", "65536", "01", "", "+1", "-1", "99999", "123456", "5555x"}
	var lines []string
	for _, p := range protos {
		for _, src := range addrs {
			for _, dst := range []string{"192.0.2.1", "2001:db8::1", src} {
				for _, sp := range ports {
					lines = append(lines, "PROXY "+strings.Join([]string{p, src, dst, sp, "80"}, " ")+"\r\n")
				}
			}
		}
	}
	lines = append(lines, []string{
		"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n",
		"PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n", "PROXY  TCP4 1.2.3.4 5.6.7.8 1 2\r\n", "PROXY TCP4\r\n", "PROXY \r\n",
		"PROXY UNKNOWN\r\n", "PROXY UNKNOWN \r\n", "PROXY UNKNOWN x y z\r\n", "PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX\r\n",
		"PROXY TCP6 " + strings.Repeat("f", 200) + "\r\n",
	}...)
	r := rand.New(rand.NewPCG(24, 7))
	base := len(lines)
	for i := range 20000 {
		b := []byte(lines[i%base])
		at := r.IntN(len(b))
		switch r.IntN(3) {
		case 0:
			b[at] = " .:%0123456789abcdefxTCP\r\n"[r.IntN(26)]
		case 1:
			b = append(b[:at], b[at+1:]...)
		default:
			b = append(b[:at+1], b[at:]...)
		}
		lines = append(lines, string(b))
	}
	return lines
}

// TestParseV1AsBefore: on every generated line that starts as a v1 one, alone and with a request
// after it, Parse finds what the parse before it found: the same status,
// length and address. What it rejected stays rejected.
func TestParseV1AsBefore(t *testing.T) {
	lines := v1Lines()
	complete := 0
	for _, line := range lines {
		for _, in := range []string{line, line + "GET / HTTP/1.1\r\n\r\n"} {
			if !strings.HasPrefix(in, "PROXY ") {
				continue // Parse does not ask parseV1
			}
			h, st := Parse([]byte(in))
			wh, wst := parseV1Before([]byte(in))
			if st != wst || h != wh {
				t.Fatalf("%q: got %v, %+v; before %v, %+v", in, st, h, wst, wh)
			}
			if st == Complete {
				complete++
			}
		}
	}
	if complete < len(lines)/20 {
		t.Errorf("only %d of %d inputs complete: the generator tests little", complete, 2*len(lines))
	}
}
