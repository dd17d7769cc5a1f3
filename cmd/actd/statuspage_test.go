package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStatusPage: --status-path serves the scoreboard on --metrics-listen,
// HTML for a browser, the status document for ?json and for Accept:
// application/json; /metrics stays as it was.
func TestStatusPage(t *testing.T) {
	addr := freeAddr(t)
	a := startActd(t, nil, "--metrics-listen", addr, "--status-path", "/status")
	if _, err := a.get(); err != nil {
		t.Fatal(err)
	}
	fetch := func(path, accept string) (string, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: got %s, want 200", path, resp.Status)
		}
		return resp.Header.Get("Content-Type"), string(b)
	}
	ctype, page := fetch("/status", "text/html,application/xhtml+xml")
	if !strings.HasPrefix(ctype, "text/html") || !strings.Contains(page, "<pre>actd ") || !strings.Contains(page, "SLOT") {
		t.Errorf("HTML: got %s:\n%s\nwant the scoreboard in a page", ctype, page)
	}
	for _, tc := range []struct{ path, accept string }{{"/status?json", ""}, {"/status", "application/json"}} {
		ctype, body := fetch(tc.path, tc.accept)
		var d statusDoc
		if err := json.Unmarshal([]byte(body), &d); err != nil || ctype != "application/json" || d.PID != a.cmd.Process.Pid || len(d.Snapshot.Slots) == 0 {
			t.Errorf("%s, Accept %q: got %s %q (%v), want the status document of pid %d", tc.path, tc.accept, ctype, body, err, a.cmd.Process.Pid)
		}
	}
	if _, metrics := fetch("/metrics", ""); !strings.Contains(metrics, "actd_connections_total") {
		t.Errorf("/metrics: got %q", metrics)
	}
}
