package slogjournal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// entry is one journal entry as the capture saw it.
type entry struct {
	message  string
	priority sdjournal.Priority
	vars     map[string]string
}

// capture stands in for sdjournal.Send.
type capture struct {
	mu      sync.Mutex
	entries []entry
	err     error
}

func (c *capture) send(message string, priority sdjournal.Priority, vars map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = append(c.entries, entry{message, priority, vars})
	return c.err
}

func TestHandlerEntry(t *testing.T) {
	var c capture
	log := slog.New(newHandler(slog.LevelInfo, c.send))
	log.With("slot", 3).WithGroup("http").Warn("slow request", "status", 200, "pid", 42)

	if len(c.entries) != 1 {
		t.Fatalf("got %d entries, want 1", len(c.entries))
	}
	e := c.entries[0]
	if want := "slow request slot=3 http.status=200 http.pid=42"; e.message != want {
		t.Errorf("got MESSAGE %q, want %q", e.message, want)
	}
	if e.priority != sdjournal.PriWarning {
		t.Errorf("got PRIORITY %d, want %d", e.priority, sdjournal.PriWarning)
	}
	want := map[string]string{
		"ACTD_SLOT": "3", "ACTD_HTTP_STATUS": "200", "ACTD_HTTP_PID": "42",
		"SYSLOG_IDENTIFIER": filepath.Base(os.Args[0]),
	}
	for k, v := range want {
		if e.vars[k] != v {
			t.Errorf("got %s=%q, want %q", k, e.vars[k], v)
		}
	}
	if !strings.HasSuffix(e.vars["CODE_FILE"], "handler_test.go") || !strings.HasSuffix(e.vars["CODE_FUNC"], "TestHandlerEntry") || e.vars["CODE_LINE"] == "" {
		t.Errorf("got CODE_FILE=%q CODE_LINE=%q CODE_FUNC=%q, want this test's position",
			e.vars["CODE_FILE"], e.vars["CODE_LINE"], e.vars["CODE_FUNC"])
	}
	if len(e.vars) != len(want)+3 {
		t.Errorf("got fields %v, want exactly %v and CODE_*", e.vars, want)
	}
}

func TestHandlerWithAttrsDoesNotLeak(t *testing.T) {
	var c capture
	base := slog.New(newHandler(nil, c.send))
	a := base.With("slot", 1)
	b := base.WithGroup("g").With("slot", 2)
	a.Info("a", "event", "x")
	b.Info("b")
	base.Info("c")
	got := []string{c.entries[0].message, c.entries[1].message, c.entries[2].message}
	want := []string{"a slot=1 event=x", "b g.slot=2", "c"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestHandlerLevel(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Leveler
		log   slog.Level
		want  bool
	}{
		{"nil means info: info passes", nil, slog.LevelInfo, true},
		{"nil means info: debug dropped", nil, slog.LevelDebug, false},
		{"debug level: debug passes", slog.LevelDebug, slog.LevelDebug, true},
		{"error level: warn dropped", slog.LevelError, slog.LevelWarn, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c capture
			slog.New(newHandler(tt.level, c.send)).Log(context.Background(), tt.log, "m")
			if got := len(c.entries) == 1; got != tt.want {
				t.Fatalf("got logged %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHandlerReturnsSendError(t *testing.T) {
	c := capture{err: errors.New("journal gone")}
	h := newHandler(nil, c.send)
	err := h.Handle(context.Background(), slog.NewRecord(timeZero, slog.LevelInfo, "m", 0))
	if err == nil || err.Error() != "journal gone" {
		t.Fatalf("got %v, want the send error", err)
	}
}

func BenchmarkHandler(b *testing.B) {
	log := slog.New(newHandler(nil, func(string, sdjournal.Priority, map[string]string) error { return nil }))
	b.ReportAllocs()
	for b.Loop() {
		log.Info("child exited", "event", "exit", "slot", 3, "pid", 4242, "status", 0)
	}
}
