package worker_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// exchange sends req on a new connection to addr and returns the whole
// answer, up to the server's close.
func exchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, bound)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(bound))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(c)
	return string(all)
}

// TestRequestsEdgeUnderActd: worker.Requests under a real actd with
// --access-log FILE and --max-request-body 1K: a line per request in the
// default format without the query string; 413 for a Content-Length over
// the limit and for a chunked body that passes it, the connection closed;
// 431 for 101 header fields; a handler's panic one error entry (stderr
// here, with no journal socket: "<3>" on each line) naming the request
// without its query string, and a 500. The master's /metrics counts each
// answer by status (worker.Tally).
func TestRequestsEdgeUnderActd(t *testing.T) {
	actd := buildActd(t)
	file := filepath.Join(t.TempDir(), "access.log")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := ln.Addr().String()
	ln.Close()
	p := startActd(t, actd, "dispatch", "--access-log", file, "--max-request-body", "1K", "--metrics-listen", metrics)

	got := exchange(t, p.addr, "GET /hello?token=secret HTTP/1.1\r\nHost: a\r\nUser-Agent: t/1\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("GET: got %q, want 200", got)
	}
	got = exchange(t, p.addr, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n"+strings.Repeat("x", 5000))
	if !strings.HasPrefix(got, "HTTP/1.1 413 ") || !strings.Contains(got, "Connection: close") {
		t.Errorf("Content-Length over the limit: got %q, want 413 and close", got)
	}
	chunk := fmt.Sprintf("%x\r\n%s\r\n", 600, strings.Repeat("y", 600))
	got = exchange(t, p.addr, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk+chunk+chunk+"0\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 413 ") || strings.Contains(got, "yyy") {
		t.Errorf("chunked body over the limit: got %q, want 413 and no echo", got)
	}
	var many strings.Builder
	for i := range 101 {
		fmt.Fprintf(&many, "X-F%d: v\r\n", i)
	}
	got = exchange(t, p.addr, "GET /many HTTP/1.1\r\nHost: a\r\n"+many.String()+"\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 431 ") {
		t.Errorf("101 header fields: got %q, want 431", got)
	}
	got = exchange(t, p.addr, "GET /panic?token=secret HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 500 ") {
		t.Errorf("panic: got %q, want 500", got)
	}

	var lines []string
	deadline := time.Now().Add(bound)
	for len(lines) < 5 && time.Now().Before(deadline) {
		time.Sleep(pollEvery)
		b, _ := os.ReadFile(file)
		lines = strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
	}
	if len(lines) != 5 {
		t.Fatalf("access log: got %d lines %q, want 5", len(lines), lines)
	}
	// Two children write the file, each in batches (accesslog/buffer.go):
	// each line must be there once, in whatever order the batches came.
	unmatched := slices.Clone(lines)
	for _, want := range []string{
		`^127\.0\.0\.1_-_-_\[[^]]+\]_"GET_/hello_HTTP/1\.1"_200_\d+_"-"_"t/1"_\d+$`,
		`"POST_/echo_HTTP/1\.1"_413_`, `"POST_/echo_HTTP/1\.1"_413_`, `"GET_/many_HTTP/1\.1"_431_`, `"GET_/panic_HTTP/1\.1"_500_`,
	} {
		i := slices.IndexFunc(unmatched, regexp.MustCompile(want).MatchString)
		if i < 0 {
			t.Errorf("access log: no line left matches %s: %q", want, lines)
			continue
		}
		unmatched = slices.Delete(unmatched, i, i+1)
	}
	b, _ := os.ReadFile(p.log)
	log := string(b)
	if strings.Contains(log+strings.Join(lines, ""), "secret") {
		t.Errorf("a query string is logged:\n%s", log)
	}
	if !strings.Contains(log, "<3>panic serving GET /panic: boom\n<3>goroutine ") || strings.Contains(log, "http: panic serving") {
		t.Errorf("the panic: got log\n%s\nwant one <3> entry naming GET /panic and no net/http panic log", log)
	}

	var counts string
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(pollEvery) {
		counts = exchange(t, metrics, "GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		if strings.Contains(counts, "actd_http_request_duration_seconds_count 5\n") {
			break
		}
	}
	for _, want := range []string{`{code="200"} 1`, `{code="413"} 2`, `{code="431"} 1`, `{code="500"} 1`, "_count 5\n"} {
		if !strings.Contains(counts, want) {
			t.Errorf("metrics lack %q:\n%s", want, counts)
		}
	}
}
