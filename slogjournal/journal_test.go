package slogjournal

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// journalSocket is where go-systemd's journal package writes.
const journalSocket = "/run/systemd/journal/socket"

// TestJournalRoundTrip writes an entry to the real journal and reads it back
// with journalctl.
func TestJournalRoundTrip(t *testing.T) {
	if _, err := os.Stat(journalSocket); err != nil {
		t.Skipf("no journald here (%s: %v)", journalSocket, err)
	}
	journalctl, err := exec.LookPath("journalctl")
	if err != nil {
		t.Skip("journalctl not installed (Debian package systemd)")
	}
	id := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	log, err := New(nil, FormatJournal, nil)
	if err != nil {
		t.Fatalf("New journal: %v", err)
	}
	log.Warn("round trip", "event", "test", "slot", 7, "test_id", id)

	got := readBack(t, journalctl, "ACTD_TEST_ID="+id)
	want := map[string]string{
		"MESSAGE": "round trip event=test slot=7 test_id=" + id, "PRIORITY": "4",
		"ACTD_EVENT": "test", "ACTD_SLOT": "7", "ACTD_TEST_ID": id,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("got %s=%v, want %q", k, got[k], v)
		}
	}
}

// readBack polls journalctl for the entry matching match, for at most 10 s
// (journald writes asynchronously).
func readBack(t *testing.T, journalctl, match string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command(journalctl, "--no-pager", "-o", "json", match).Output()
		if line, _, _ := strings.Cut(string(out), "\n"); err == nil && line != "" {
			var entry map[string]any
			if err := json.Unmarshal([]byte(line), &entry); err != nil {
				t.Fatalf("decode journalctl output %q: %v", line, err)
			}
			return entry
		}
		if time.Now().After(deadline) {
			t.Fatalf("journalctl %s: no entry after 10s (last error %v)", match, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
