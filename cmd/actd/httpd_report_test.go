package main

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/prefork"
)

// TestBuiltinReportsRequest: in both modes, the built-in handler's request
// in hand shows in the status as its method and path (no query, no
// version) while it runs, and no longer once answered.
func TestBuiltinReportsRequest(t *testing.T) {
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) {
			a := startActd(t, nil, "--accept", mode, "--start-children", "2", "--handler-delay", "1500ms")
			waitFor(t, "an idle child", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle > 0 })
			answered := make(chan error, 1)
			go func() { answered <- a.request("GET /slow/page?token=secret HTTP/1.0\r\n\r\n") }()
			waitFor(t, `a busy slot showing "GET /slow/page"`, 10*time.Second, func() bool {
				return requestShown(a.status(t).Snapshot) == "GET /slow/page"
			})
			if err := <-answered; err != nil {
				t.Fatalf("slow request: %v", err)
			}
			waitFor(t, "no request shown after the answer", 10*time.Second, func() bool {
				return requestShown(a.status(t).Snapshot) == ""
			})
		})
	}
}

// requestShown returns the request a busy slot shows, "" if none does.
func requestShown(s prefork.Snapshot) string {
	for _, sl := range s.Slots {
		if sl.Request != "" && sl.State == "B" {
			return sl.Request
		}
	}
	return ""
}

// request sends raw, a whole HTTP/1.0 request, and reads the answer to its end.
func (a *actd) request(raw string) error {
	c, err := net.DialTimeout("unix", a.sock, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte(raw)); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestSlowAndHungNameRequest: with --slow-request below the handler's delay
// the log has one slow line naming the request; with --busy-timeout below it
// too, the SIGQUIT line names it as well.
func TestSlowAndHungNameRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		event string
	}{
		{"slow", []string{"--slow-request", "300ms"}, "event=slow"},
		{"busy timeout", []string{"--slow-request", "300ms", "--busy-timeout", "1200ms"}, "event=hung"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--start-children", "1", "--handler-delay", "2500ms"}, tc.args...)
			a := startActd(t, nil, args...)
			waitFor(t, "an idle child", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle > 0 })
			go a.request("GET /report/2026?x=1 HTTP/1.0\r\n\r\n")
			waitFor(t, tc.event+" naming the request", 15*time.Second, func() bool {
				return logLineHas(a.stderr.String(), tc.event, `request="GET /report/2026"`)
			})
			if tc.event == "event=slow" && strings.Count(a.stderr.String(), "event=slow") != 1 {
				t.Errorf("want one slow line per request; log:\n%s", a.stderr.String())
			}
		})
	}
}

// logLineHas reports whether one line of log contains every part.
func logLineHas(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
