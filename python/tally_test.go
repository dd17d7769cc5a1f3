package python_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
)

// TestTallyUnderActd: the WSGI adapter tallies what it answers (T,
// actd.tally), an answer it refuses itself (413) included, and the
// master's /metrics counts each request once, in dispatch and exclusive
// mode and from children a zygote forked (--preload), without an access
// log.
func TestTallyUnderActd(t *testing.T) {
	py := python(t)
	for _, tc := range []struct {
		name, mode string
		flags      []string
	}{
		{"dispatch", "dispatch", nil},
		{"exclusive", "exclusive", nil},
		{"preload", "dispatch", preloadFlags},
	} {
		t.Run(tc.name, func(t *testing.T) {
			metrics := pooltest.FreeAddr(t)
			p := startPool(t, tc.mode, []string{py, "-m", "actd.wsgi", "validated:app"},
				append([]string{"--metrics-listen", metrics, "--max-request-body", "1K"}, tc.flags...)...)
			for i := range 3 {
				if got, err := exchange(p.addr, "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil || len(got) != 1 || got[0].status != 200 {
					t.Fatalf("request %d: got %+v, %v", i, got, err)
				}
			}
			if got, err := exchange(p.addr, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"); err != nil || len(got) != 1 || got[0].status != 413 {
				t.Fatalf("a body over the limit: got %+v, %v; want 413", got, err)
			}
			var body string
			for deadline := time.Now().Add(ioTimeout); time.Now().Before(deadline); time.Sleep(pollEvery) {
				if resp, err := http.Get("http://" + metrics + "/metrics"); err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if body = string(b); strings.Contains(body, "actd_http_request_duration_seconds_count 4\n") {
						break
					}
				}
			}
			for _, want := range []string{`actd_http_requests_total{code="200"} 3` + "\n", `actd_http_requests_total{code="413"} 1` + "\n",
				`actd_http_request_duration_seconds_bucket{le="+Inf"} 4` + "\n", "actd_http_request_duration_seconds_count 4\n"} {
				if !strings.Contains(body, want) {
					t.Errorf("metrics lack %q:\n%s", want, body)
				}
			}
		})
	}
}
