package acceptfilter

import (
	"strings"
	"testing"

	"github.com/actd/actd/internal/conformance"
)

// TestReady: when each filter finds what a client sent so far enough for a
// child.
func TestReady(t *testing.T) {
	long := strings.Repeat("x", HeadLimit)
	for _, tc := range []struct {
		filter Filter
		head   string
		from   int
		want   bool
	}{
		{None, "", 0, true},
		{Data, "", 0, false},
		{Data, "G", 0, true},
		{HTTP, "", 0, false},
		{HTTP, "GET / HTTP/1.1\r\nHost: a\r\n", 0, false},
		{HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 0, true},
		{HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 26, true}, // the CRLF before "from" counts
		{HTTP, "GET / HTTP/1.1\r\n\r", 0, false},
		{HTTP, "GET / HTTP/1.1\r\n\r\n", 17, true},
		{HTTP, "\r\n", 0, false},     // an empty line before a request: skipped
		{HTTP, "\r\n\r\n", 0, false}, // two: nothing of a request yet
		{HTTP, "\r\n\r\nGET / HTTP/1.1\r\n\r\n", 4, true},
		{HTTP, "GET / HTTP/1.0\n\n", 0, true},                         // bare LF: every worker answers 400 at once
		{HTTP, "\n", 0, true},                                         // the same
		{HTTP, "GET / HTTP/1.1\rX", 0, true},                          // a bare CR
		{HTTP, "GET / HTTP/1.1\r", 0, false},                          // a CR that may yet be a CRLF
		{HTTP, "GET /\r\n", 0, true},                                  // no version: 400
		{HTTP, "GET / HTTP/1.1\r\n", 0, false},                        // good so far
		{HTTP, "GET / HTTP/2.0\r\n", 0, false},                        // good so far: 505 comes with the head
		{HTTP, "GET /\x00", 0, true},                                  // a control byte
		{HTTP, "GET /" + long[:LineLimit] + " HTTP/1.1\r\n", 0, true}, // 414
		{HTTP, "GET /" + long[:LineLimit], 0, true},
		{HTTP, "GET /" + long[:LineLimit-20], 0, false},
		{HTTP, long, 0, true}, // at the limit: the child answers 431 (or 414)
		{HTTP, "GET / HTTP/1.1\r\nX: " + long[:HeadLimit-30], 0, false},
		{HTTP, "GET / HTTP/1.1\r\nX: " + long[:HeadLimit-19], 0, true},
	} {
		t.Run(tc.filter.String()+"/"+strings.ReplaceAll(tc.head[:min(len(tc.head), 30)], "\r\n", "|"), func(t *testing.T) {
			if got := tc.filter.Ready([]byte(tc.head), tc.from); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestParse: the names round-trip; anything else is refused.
func TestParse(t *testing.T) {
	for _, name := range []string{"none", "data", "http"} {
		f, err := Parse(name)
		if err != nil || f.String() != name {
			t.Errorf("Parse(%q) = %v, %v; want %s, nil", name, f, err, name)
		}
	}
	for _, bad := range []string{"HTTP", "", "dataready"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): got nil, want an error", bad)
		}
	}
	if got := Filter(7).String(); got != "filter(7)" {
		t.Errorf("Filter(7).String() = %q, want filter(7)", got)
	}
}

// TestReadyConformance: every case of the framing corpus, whole, is ready
// (a worker answers it at once), and no byte-at-a-time prefix of a good
// request's head is: the master hands over neither too late nor too early.
func TestReadyConformance(t *testing.T) {
	for _, c := range conformance.Cases {
		t.Run(c.Name, func(t *testing.T) {
			b := []byte(c.Bytes())
			if !HTTP.Ready(b, 0) {
				t.Errorf("whole case %q: got not ready, want ready", c.Bytes())
			}
			if c.Status != 200 {
				return
			}
			end := strings.Index(strings.TrimLeft(c.Request, "\r\n"), "\r\n\r\n") + 4 +
				len(c.Request) - len(strings.TrimLeft(c.Request, "\r\n"))
			for n := 1; n < end; n++ {
				if HTTP.Ready(b[:n], n-1) {
					t.Fatalf("prefix %q: got ready, want not ready", b[:n])
				}
			}
			if !HTTP.Ready(b[:end], end-1) {
				t.Errorf("head %q, byte at a time: got not ready, want ready", b[:end])
			}
		})
	}
}
