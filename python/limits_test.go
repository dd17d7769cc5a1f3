package python_test

import (
	"strings"
	"testing"
)

// TestBodyLimitUnderActd: a child whose ACTD_MAX_REQUEST_BODY is 10 (set by
// env(1) in the command, as the master sets it from --max-request-body)
// answers a larger Content-Length with 413 at once, without the body being
// sent, and closes; a chunked body that grows past it gets 413 too; one
// within it is served.
func TestBodyLimitUnderActd(t *testing.T) {
	py := python(t)
	cases := []struct {
		name, raw string
		status    int
		body      string
	}{
		{"within", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789", 200, "POST /echo  0123456789"},
		{"length over, body unsent", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n", 413, "Content Too Large\n"},
		{"chunked over", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n",
			413, "Content Too Large\n"},
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			p := startPool(t, mode, []string{"env", "ACTD_MAX_REQUEST_BODY=10", py, "-m", "actd.wsgi", "validated:app"})
			for _, c := range cases {
				// no Connection: close: a 413 closes by itself, a 200 after keep-alive
				raw := c.raw + "GET /echo?after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
				got, err := exchange(p.addr, raw)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if len(got) == 0 || got[0].status != c.status || got[0].body != c.body {
					t.Fatalf("%s: got %+v, want %d %q first", c.name, got, c.status, c.body)
				}
				if c.status == 413 && (len(got) != 1 || !got[0].close) {
					t.Errorf("%s: got %d responses (close %v), want the 413 alone and the connection closed", c.name, len(got), got[0].close)
				}
			}
			if text := p.LogText(t); !strings.Contains(text, "Content-Length 1000000 over 10") {
				t.Errorf("log: want the 413's line, got\n%s", text)
			}
		})
	}
}
