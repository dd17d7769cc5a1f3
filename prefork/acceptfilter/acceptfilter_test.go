package acceptfilter

import (
	"strings"
	"testing"
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
		{HTTP, "GET / HTTP/1.0\n\n", 0, true},
		{HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 26, true}, // the CRLF before "from" counts
		{HTTP, "GET / HTTP/1.1\r\n\r", 0, false},
		{HTTP, long, 0, true}, // at the limit: the child answers 431
		{HTTP, long[:HeadLimit-1], 0, false},
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
