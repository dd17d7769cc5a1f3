package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStatusShowsChildMemory: `actd status` shows each child's resident
// memory and CPU time, in its text and in its JSON document; with
// --max-child-memory below what any child holds, every child that served
// is recycled (logged as recycled, reason memory) and no request fails.
func TestStatusShowsChildMemory(t *testing.T) {
	a := startActd(t, nil, "--max-child-memory", "1M", "--ping-interval", "200ms", "--ping-timeout", "400ms")
	for i := range 10 {
		if _, err := a.get(); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		// Pacing, not a wait: the requests spread over several pings
		// (200ms), so that children serve and are measured in turn; what
		// follows waits on conditions.
		time.Sleep(100 * time.Millisecond)
	}
	waitFor(t, "a recycled line with reason memory", 5*time.Second, func() bool {
		return regexp.MustCompile(`event=recycled .*reason=memory memory=[0-9]+ limit=1048576`).MatchString(a.stderr.String())
	})
	var slots int
	waitFor(t, "every child measured", 5*time.Second, func() bool {
		doc := a.status(t)
		slots = len(doc.Snapshot.Slots)
		for _, sl := range doc.Snapshot.Slots {
			if sl.Memory < 1<<20 {
				return false
			}
		}
		return doc.Snapshot.Stats.MemRecycled > 0 && slots > 0
	})
	cmd := exec.Command(os.Args[0], "status", "--control-socket", a.ctl)
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("actd status: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "RSS") || !strings.Contains(text, "CPU") {
		t.Errorf("actd status: got no RSS and CPU columns in\n%s", text)
	}
	// The pool may have moved since the JSON read: count its rows in this text.
	rows := len(regexp.MustCompile(`(?m)^[0-9]+\s+[A-Z.]\s+[0-9]+\s`).FindAllString(text, -1))
	if got := len(regexp.MustCompile(`(?m)\s[0-9]+\.[0-9]M\s+[0-9]+\.[0-9]{2}s\s`).FindAllString(text, -1)); got != rows || rows == 0 {
		t.Errorf("actd status: got %d slot lines with a size and a CPU time, want one for each of its %d rows:\n%s", got, rows, text)
	}
	if !regexp.MustCompile(`memory: [1-9][0-9]* recycled over --max-child-memory, 0 OOM-killed`).MatchString(text) {
		t.Errorf("actd status: got no memory totals in\n%s", text)
	}
}
