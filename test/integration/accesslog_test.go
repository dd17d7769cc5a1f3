//go:build integration

package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAccessLogJournal: --access-log journal under the packaged unit puts
// one native-protocol entry per request in actd.service's journal, at
// priority 6, with the HTTP_* fields and REMOTE_ADDR.
func TestAccessLogJournal(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t), Config: "accept-filter = http\naccess-log = journal\n"}
	a.SetUp(pool)
	a.Activate(pool.Addr(), serviceUnit)
	for range 2 {
		if _, err := a.Get(pool.Addr(), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	var entries []map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for len(entries) < 3 && time.Now().Before(deadline) {
		entries = nil
		out, _ := a.RunErr("journalctl", "--no-pager", "-o", "json", "-u", serviceUnit, "HTTP_METHOD=GET")
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil {
				entries = append(entries, e)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(entries) != 3 {
		t.Fatalf("got %d access-log entries, want 3 (the activating request and 2):\n%v", len(entries), entries)
	}
	for _, e := range entries {
		msg, _ := e["MESSAGE"].(string)
		if e["PRIORITY"] != "6" || e["HTTP_STATUS"] != "200" || e["HTTP_PATH"] != "/" || e["REMOTE_ADDR"] != "127.0.0.1" ||
			e["HTTP_BYTES"] == nil || e["HTTP_DURATION_US"] == nil || !strings.Contains(msg, `"GET / HTTP/1.1" 200 `) {
			t.Errorf("got entry %v, want priority 6, HTTP_STATUS=200, HTTP_PATH=/, REMOTE_ADDR=127.0.0.1 and the line", e)
		}
	}
}

// TestAccessLogFileReopened: --access-log FILE in LogsDirectory= under the
// packaged unit, and logrotate's way: the file renamed, `systemctl
// reload`, and the next lines are in a new file.
func TestAccessLogFileReopened(t *testing.T) {
	a := NewActdBox(t)
	const file = "/var/log/actd/access.log"
	pool := Pool{Port: freePort(t), Config: "accept-filter = http\naccess-log = " + file + "\n", Service: "LogsDirectory=actd\n"}
	a.SetUp(pool)
	a.Activate(pool.Addr(), serviceUnit)
	waitLines := func(path string, n int) []string {
		t.Helper()
		var lines []string
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			out, _ := a.RunErr("cat", "--", path)
			lines = strings.Split(strings.TrimSpace(out), "\n")
			if strings.Contains(out, `"GET / HTTP/1.1" 200 `) && len(lines) >= n {
				return lines
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: got %q, want %d access-log lines", path, lines, n)
		return nil
	}
	waitLines(file, 1)
	a.Run("mv", file, file+".1")
	a.Run("systemctl", "reload", serviceUnit)
	if _, err := a.Get(pool.Addr(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if lines := waitLines(file, 1); len(lines) != 1 {
		t.Errorf("after the reload: got %q, want the one new line in a new file", lines)
	}
	if old := waitLines(file+".1", 1); len(old) != 1 {
		t.Errorf("the renamed file: got %q, want its one line only", old)
	}
}
