package perl_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAccessLog runs the handler under a real actd with ACTD_ACCESS_LOG
// fd:9 (a file the worker's command opens, as actd passes one) and a
// format of every kind of directive (docs/perl.md, "Access log"): each
// request, a 404 and a 431 among them, is one line, in order, without
// the query string but where %q asks for it.
func TestAccessLog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "access.log")
	prefix := []string{"sh", "-c", `exec 9>>"$0"; ACTD_ACCESS_LOG=fd:9 exec "$@"`, file}
	p := startPoolWith(t, append([]string{"env", `ACTD_ACCESS_LOG_FORMAT=%h "%r" %>s %b %{User-Agent}i q=%q %D`}, prefix...),
		"dispatch", "app.psgi", "--start-children", "1", "--min-children", "1", "--max-children", "1")
	conn, err := net.DialTimeout("tcp", p.addr, ioBound)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioBound))
	r := bufio.NewReader(conn)
	for _, req := range []string{
		"GET /hello?token=secret HTTP/1.1\r\nHost: x\r\nUser-Agent: probe/1\r\n\r\n",
		"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /hello HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: b\r\n", 100) + "\r\n",
	} {
		fmt.Fprint(conn, req)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("read answer: %v", err)
		}
		resp.Body.Close()
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^127\.0\.0\.1 "GET /hello HTTP/1\.1" 200 \d+ probe/1 q=\?token=secret \d+$`),
		regexp.MustCompile(`^127\.0\.0\.1 "GET /nothing HTTP/1\.1" 404 \d+ - q= \d+$`),
		regexp.MustCompile(`^127\.0\.0\.1 "- - -" 431 \d+ - q= \d+$`),
	}
	var lines []string
	deadline := time.Now().Add(ioBound)
	for len(lines) < len(want) && time.Now().Before(deadline) {
		b, _ := os.ReadFile(file)
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(b) == 0 {
			lines = nil
		}
		time.Sleep(pollEvery)
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines %q, want %d", len(lines), lines, len(want))
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d: got %q, want it to match %s", i+1, lines[i], re)
		}
	}
	if strings.Contains(strings.Join(lines, "\n"), "GET /hello?token") {
		t.Errorf("a line has the query string in %%r: %q", lines)
	}
}
