package perl_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLimits runs the handler under a real actd with
// ACTD_MAX_REQUEST_BODY=1000 (docs/perl.md, "Limits"): a Content-Length
// over it is answered 413 before the body is sent and the connection
// closed, a chunked body that grows past it too, a body at it is echoed,
// and a head of 101 fields gets 431.
func TestLimits(t *testing.T) {
	p := startPoolWith(t, []string{"env", "ACTD_MAX_REQUEST_BODY=1000"}, "dispatch", "app.psgi",
		"--start-children", "1", "--min-children", "1", "--max-children", "1")
	chunk := fmt.Sprintf("%x\r\n%s\r\n", 600, strings.Repeat("c", 600))
	for _, tc := range []struct {
		name, request string
		status        int
		close         bool
	}{
		{"Content-Length over the limit, body not sent", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", 413, true},
		{"chunked past the limit", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk, 413, true},
		{"Content-Length at the limit", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + strings.Repeat("b", 1000), 200, false},
		{"101 header fields", "GET /hello HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: b\r\n", 100) + "\r\n", 431, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", p.addr, ioBound)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(ioBound))
			if _, err := io.WriteString(conn, tc.request); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, &http.Request{Method: "POST"})
			if err != nil {
				t.Fatalf("read answer: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if tc.status == 413 && resp.Status != "413 Content Too Large" {
				t.Errorf("got %q, want 413 Content Too Large", resp.Status)
			}
			if resp.StatusCode != tc.status || resp.Close != tc.close {
				t.Errorf("got %s (close %v), want %d (close %v)", resp.Status, resp.Close, tc.status, tc.close)
			}
			if tc.close {
				if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil {
					t.Errorf("after the answer: got %d bytes, %v; want the connection closed", n, err)
				}
			}
		})
	}
}
