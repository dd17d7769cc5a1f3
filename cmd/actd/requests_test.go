package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRequestMetrics: the built-in handler's children tally what they
// answer (protocol Tally), and /metrics shows it: requests by status code
// and a duration histogram whose count is all of them, which promtool
// finds nothing to say about; the status document and page (HTML, JSON)
// have the same counts. Under the http filter the master answers the 413
// itself, and counts it with the children's.
func TestRequestMetrics(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"dispatch", []string{"--accept-filter", "none"}},
		{"filter", []string{"--accept-filter", "http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, metrics := freeAddr(t), freeAddr(t)
			a := startActd(t, nil, append([]string{"--listen", addr, "--metrics-listen", metrics,
				"--max-request-body", "1K", "--status-path", "/status"}, tc.args...)...)
			for range 3 {
				exchange(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			}
			for range 2 {
				exchange(t, addr, "GET /bytes/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			}
			exchange(t, addr, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n")
			var body string
			waitFor(t, "6 requests in the metrics", 10*time.Second, func() bool {
				_, body, _ = scrape(metrics, "/metrics")
				return strings.Contains(body, "actd_http_request_duration_seconds_count 6\n")
			})
			for _, want := range []string{
				"# TYPE actd_http_requests_total counter\n",
				`actd_http_requests_total{code="200"} 3` + "\n",
				`actd_http_requests_total{code="404"} 2` + "\n",
				`actd_http_requests_total{code="413"} 1` + "\n",
				"# TYPE actd_http_request_duration_seconds histogram\n",
				`actd_http_request_duration_seconds_bucket{le="0.005"} `,
				`actd_http_request_duration_seconds_bucket{le="10"} `,
				`actd_http_request_duration_seconds_bucket{le="+Inf"} 6` + "\n",
				"actd_http_request_duration_seconds_sum ",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("metrics lack %q:\n%s", want, body)
				}
			}
			if strings.Contains(body, `code="500"`) || strings.Contains(body, `code="other"`) {
				t.Errorf("metrics count codes nobody answered:\n%s", body)
			}
			if r := a.status(t).Snapshot.Requests; r == nil || r.Total != 6 || r.Codes["200"] != 3 || r.Codes["404"] != 2 || r.Codes["413"] != 1 {
				t.Errorf("status requests = %+v, want 6: 3 × 200, 2 × 404, 1 × 413", r)
			}
			if _, page, _ := scrape(metrics, "/status"); !strings.Contains(page, "requests: 6 answered: 200 × 3, 404 × 2, 413 × 1; mean ") {
				t.Errorf("the status page lacks the requests line:\n%s", page)
			}
			if _, doc, _ := scrape(metrics, "/status?json"); !strings.Contains(doc, `"requests":{"total":6,"codes":{"200":3,"404":2,"413":1},"bounds":[0.005,`) {
				t.Errorf("the status JSON lacks the requests:\n%s", doc)
			}
			promtool, err := exec.LookPath("promtool")
			if err != nil {
				t.Skip("promtool not installed (Debian package prometheus)")
			}
			check := exec.Command(promtool, "check", "metrics")
			check.Stdin = strings.NewReader(body)
			if out, err := check.CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("promtool check metrics: %v\n%s", err, out)
			}
		})
	}
}
