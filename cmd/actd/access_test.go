package main

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

// Process tests of --access-log: the built-in handler's lines, in a file
// the master opens for each generation.

// exchange sends req on a new TCP connection to addr and returns all the
// answer, up to the server's close.
func exchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(c)
	return string(all)
}

// logLines waits until file holds n lines and returns them.
func logLines(t *testing.T, file string, n int) []string {
	t.Helper()
	var lines []string
	waitFor(t, fmt.Sprintf("%d lines in %s", n, file), 5*time.Second, func() bool {
		b, _ := os.ReadFile(file)
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		return len(b) > 0 && len(lines) >= n
	})
	return lines
}

// TestAccessLogFile: one line per request in the default format (the
// query string left out) and in a custom one, an error answer included;
// a reload after the file was renamed writes to a new file, and the file
// has mode 0640.
func TestAccessLogFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "access.log")
	conf := filepath.Join(dir, "actd.conf")
	addr := freeAddr(t)
	if err := os.WriteFile(conf, []byte("access-log = "+file+"\nmax-request-body = 1K\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startActd(t, nil, "--config", conf, "--listen", addr)
	exchange(t, addr, "GET /hello?token=secret HTTP/1.1\r\nHost: a\r\nUser-Agent: t/1\r\nReferer: http://r/\r\nConnection: close\r\n\r\n")
	exchange(t, addr, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n")
	lines := logLines(t, file, 2)
	// two children may serve the two: each writes its line after its
	// answer, so the lines may come in either order
	for _, want := range []string{
		`^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [-+]\d{4}\] "GET /hello HTTP/1\.1" 200 \d+ "http://r/" "t/1" \d+$`,
		`^127\.0\.0\.1 - - \[.*\] "POST /up HTTP/1\.1" 413 18 "-" "-" \d+$`,
	} {
		if !slices.ContainsFunc(lines, regexp.MustCompile(want).MatchString) {
			t.Errorf("got %q, want a line to match %s", lines, want)
		}
	}
	if strings.Contains(strings.Join(lines, "\n"), "secret") {
		t.Errorf("got %q: the query string is logged", lines)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("got %v, %v; want mode 0640", fi.Mode(), err)
	}

	rotated := file + ".1"
	if err := os.Rename(file, rotated); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("access-log = "+file+"\naccess-log-format = %m %U%q %>s %B pid=%P\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := runReloadCmd(t, a); code != exitOK {
		t.Fatalf("reload: exit status %d: %s", code, out)
	}
	exchange(t, addr, "GET /again?x=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	lines = logLines(t, file, 1)
	if !regexp.MustCompile(`^GET /again\?x=1 200 \d+ pid=\d+$`).MatchString(lines[0]) {
		t.Errorf("after the reload: got %q, want the custom format", lines)
	}
	if old := logLines(t, rotated, 2); len(old) != 2 {
		t.Errorf("the renamed file: got %q, want its 2 lines only", old)
	}
}

// TestAccessLogJournalFallback: --access-log journal without a journal
// socket writes the lines to stderr.
func TestAccessLogJournalFallback(t *testing.T) {
	if _, err := os.Stat("/run/systemd/journal/socket"); err == nil {
		t.Skip("a journal socket exists here: the lines go to it (test/integration reads them)")
	}
	addr := freeAddr(t)
	a := startActd(t, nil, "--access-log", "journal", "--listen", addr)
	exchange(t, addr, "GET /j?q=1 HTTP/1.0\r\n\r\n")
	waitFor(t, "the line on stderr", 5*time.Second, func() bool {
		return strings.Contains(a.stderr.String(), `"GET /j HTTP/1.0" 200 `)
	})
}

// TestAccessLogUnopenable: an access-log file the master cannot open (a
// symbolic link into a directory that does not exist, which the config
// check lets through) stops actd at start with exit status 78 naming the
// key.
func TestAccessLogUnopenable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "access.log")
	if err := os.Symlink("/nonexistent/dir/access.log", file); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runActdOut(t, "--listen", "127.0.0.1:0", "--access-log", file)
	if code != exitConfig || !strings.Contains(stderr, "access-log: open "+file) {
		t.Errorf("got exit status %d, %q; want %d naming access-log", code, stderr, exitConfig)
	}
}
