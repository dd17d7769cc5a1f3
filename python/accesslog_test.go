package python_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAccessLogUnderActd: with ACTD_ACCESS_LOG=fd:9 (a file sh opens
// O_APPEND in the command, as the master will open --access-log FILE),
// each request is one line of the default format, without its query.
func TestAccessLogUnderActd(t *testing.T) {
	py := python(t)
	file := filepath.Join(t.TempDir(), "access.log")
	script := `exec 9>>"$0"; ACTD_ACCESS_LOG=fd:9 exec "$1" -m actd.wsgi validated:app`
	p := startPool(t, "exclusive", []string{"sh", "-c", script, file, py})
	for i := range 3 {
		raw := fmt.Sprintf("GET /echo?token=s3cret%d HTTP/1.1\r\nHost: x\r\nUser-Agent: test/%d\r\nConnection: close\r\n\r\n", i, i)
		if got, err := exchange(p.addr, raw); err != nil || len(got) != 1 || got[0].status != 200 {
			t.Fatalf("request %d: got %+v, %v", i, got, err)
		}
	}
	line := regexp.MustCompile(`^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "GET /echo HTTP/1\.1" 200 \d+ "-" "test/\d" \d+$`)
	deadline := time.Now().Add(ioTimeout)
	for {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
		if len(lines) == 3 {
			for _, l := range lines {
				if !line.MatchString(l) {
					t.Errorf("access log line: got %q, want the default format without the query", l)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("access log: got %q, want 3 lines", text)
		}
		time.Sleep(pollEvery)
	}
}
