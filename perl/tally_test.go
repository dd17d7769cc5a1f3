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

	"github.com/actd/actd/internal/pooltest"
)

// TestTally: the handler tallies what it answers (T, Actd::Tally), and the
// master's /metrics counts each request once, in dispatch and exclusive
// mode and screening under a filter, without an access log and with no
// complaint; under a revision-5 master (ACTD_PROTOCOL=5) the child sends
// no T, which that master would take for garbage.
func TestTally(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		prefix     []string
		flags      []string
		counted    bool
	}{
		{"dispatch", "dispatch", nil, nil, true},
		{"exclusive", "exclusive", nil, nil, true},
		{"screen", "dispatch", nil, []string{"--accept-filter", "http"}, true},
		{"revision 5", "dispatch", []string{"env", "ACTD_PROTOCOL=5"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			metrics := pooltest.FreeAddr(t)
			p := startPoolWith(t, tc.prefix, tc.mode, "app.psgi", append([]string{"--metrics-listen", metrics}, tc.flags...)...)
			for i, path := range []string{"/hello", "/hello", "/hello", "/nothing"} {
				if status := getStatus(t, p.addr, path); status != 200 && status != 404 {
					t.Fatalf("request %d: got %d", i, status)
				}
			}
			var body string
			deadline := time.Now().Add(ioBound)
			if !tc.counted {
				deadline = time.Now().Add(2 * time.Second) // more than the second a T may wait
			}
			for ; time.Now().Before(deadline); time.Sleep(pollEvery) {
				if resp, err := http.Get("http://" + metrics + "/metrics"); err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if body = string(b); strings.Contains(body, "actd_http_request_duration_seconds_count 4\n") {
						break
					}
				}
			}
			want := []string{`actd_http_requests_total{code="200"} 3` + "\n", `actd_http_requests_total{code="404"} 1` + "\n",
				`actd_http_request_duration_seconds_bucket{le="+Inf"} 4` + "\n"}
			for _, w := range want {
				if strings.Contains(body, w) != tc.counted {
					t.Errorf("metrics have %q: %v, want %v:\n%s", w, !tc.counted, tc.counted, body)
				}
			}
			if c := p.complaints(); len(c) > 0 {
				t.Errorf("complaints in actd's log: %q", c)
			}
		})
	}
}

// getStatus sends GET path on a connection of its own and returns the status.
func getStatus(t *testing.T, addr, path string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, ioBound)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioBound))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
