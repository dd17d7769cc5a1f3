package perl_test

import (
	"encoding/hex"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestWholeSpan: Actd::Exact::whole_span, how many bytes of a peek the
// handler reads on a connection that may go back to the master, on the
// table of cmd/actd's TestWholeSpan (and python/tests/test_exact.py);
// "u" is no bound.
func TestWholeSpan(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skipf("perl needed (Debian package perl): %v", err)
	}
	get := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	post := "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
	chunked := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	cases := []struct {
		name, peek string
		want       int // -1: no bound
	}{
		{"one request", get, len(get)},
		{"two whole", get + get, 2 * len(get)},
		{"whole then start of next", get + "GET / HT", len(get)},
		{"whole then head of next without its body", get + post + "ab", len(get)},
		{"body whole", post + "abcde", len(post) + 5},
		{"body whole then next", post + "abcde" + get, len(post) + 5 + len(get)},
		{"body not in: its length", post + "ab", len(post) + 5},
		{"chunked whole", chunked + "3\r\nabc\r\n0\r\n\r\n" + "GET", len(chunked) + 13},
		{"chunked not whole: no bound", chunked + "3\r\nabc\r\n", -1},
		{"head not whole: no bound", "GET / HTTP/1.1\r\nHo", -1},
		{"two Content-Length: no bound", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -1},
		{"a bad request line: no bound", "GET /\r\nHost: a\r\n\r\n", -1},
		{"empty lines before a request", "\r\n" + get, 2 + len(get)},
		{"nothing", "", 0},
	}
	var in strings.Builder
	for _, tc := range cases {
		in.WriteString(hex.EncodeToString([]byte(tc.peek)) + "\n")
	}
	cmd := exec.Command("perl", "-Ilib", "-MActd::Exact", "-ne",
		`chomp; print Actd::Exact::whole_span(pack "H*", $_) // -1, "\n"`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perl: %v", err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(cases) {
		t.Fatalf("perl printed %d spans, want %d: %q", len(got), len(cases), out)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if want := strconv.Itoa(tc.want); got[i] != want {
				t.Errorf("whole_span(%q) = %s, want %s", tc.peek, got[i], want)
			}
		})
	}
}
