package proxyproto

import "testing"

// headers are the headers a balancer sends, each before a request: v1
// TCP4 as on loopback, v1 TCP6, v1 UNKNOWN, v2 TCP4.
var headers = []struct{ name, in string }{
	{"v1 TCP4", "PROXY TCP4 127.0.0.1 127.0.0.1 45678 7333\r\n" + get},
	{"v1 TCP6", "PROXY TCP6 2001:db8::7 2001:db8::1 45678 443\r\n" + get},
	{"v1 UNKNOWN", "PROXY UNKNOWN\r\n" + get},
	{"v2 TCP4", string(v2(1, 0x11, inet4("203.0.113.7", "192.0.2.1", 5555, 80))) + get},
}

const get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

// TestParseAllocs: a valid header costs Parse no allocation.
func TestParseAllocs(t *testing.T) {
	for _, tc := range headers {
		in := []byte(tc.in)
		if n := testing.AllocsPerRun(100, func() { Parse(in) }); n != 0 {
			t.Errorf("%s: %v allocations, want 0", tc.name, n)
		}
	}
}

// BenchmarkParse: each of headers, with Parse and, for the v1 lines, the
// parse before it (parseV1Before), for the figures in the commit.
func BenchmarkParse(b *testing.B) {
	for _, bc := range headers {
		in := []byte(bc.in)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, st := Parse(in); st != Complete {
					b.Fatal(st)
				}
			}
		})
		if bc.in[0] != 'P' {
			continue
		}
		b.Run(bc.name+" before", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, st := parseV1Before(in); st != Complete {
					b.Fatal(st)
				}
			}
		})
	}
}
