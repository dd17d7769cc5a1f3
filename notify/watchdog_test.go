package notify

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

const sec = time.Second

func TestWatchdogCadence(t *testing.T) {
	tests := []struct {
		name      string
		interval  time.Duration
		unhealthy [2]time.Duration // unhealthy from [0] until [1]; zero: never
		nilCheck  bool
		runFor    time.Duration
		want      []time.Duration
		wantLog   []string
	}{
		{
			name: "healthy pings at once and every half interval", interval: 10 * sec, runFor: 21 * sec,
			want: []time.Duration{0, 5 * sec, 10 * sec, 15 * sec, 20 * sec},
		},
		{
			name: "nil Healthy means healthy", interval: 4 * sec, nilCheck: true, runFor: 5 * sec,
			want: []time.Duration{0, 2 * sec, 4 * sec},
		},
		{
			name: "no pings while unhealthy", interval: 10 * sec, unhealthy: [2]time.Duration{7 * sec, 17 * sec}, runFor: 26 * sec,
			want:    []time.Duration{0, 5 * sec, 20 * sec, 25 * sec},
			wantLog: []string{"not healthy, no longer pinging", "healthy again"},
		},
		{
			name: "unhealthy from the start", interval: 2 * sec, unhealthy: [2]time.Duration{0, time.Hour}, runFor: 10 * sec,
			want:    nil,
			wantLog: []string{"not healthy, no longer pinging"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newRecorder()
				var logs bytes.Buffer
				w := Watchdog{
					Notifier: WithSend(rec.send),
					Interval: tt.interval,
					Healthy: func() bool {
						at := time.Since(rec.start)
						return at < tt.unhealthy[0] || at >= tt.unhealthy[1]
					},
					Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				}
				if tt.nilCheck {
					w.Healthy = nil
				}
				runFor(t, w.Run, tt.runFor)
				var got []time.Duration
				for _, s := range rec.got() {
					if s.state != "WATCHDOG=1" {
						t.Fatalf("got %v, want only WATCHDOG=1", s)
					}
					got = append(got, s.at)
				}
				if fmtDur(got) != fmtDur(tt.want) {
					t.Fatalf("got pings at %v, want %v", got, tt.want)
				}
				checkLog(t, logs.String(), tt.wantLog)
			})
		})
	}
}

// fmtDur renders ds for comparison.
func fmtDur(ds []time.Duration) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + " ")
	}
	return b.String()
}

// checkLog checks that log has exactly the wanted messages, in order.
func checkLog(t *testing.T, log string, want []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if log == "" {
		lines = nil
	}
	if len(lines) != len(want) {
		t.Fatalf("got log %q, want %d lines with %q", log, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Fatalf("got log line %q, want it to contain %q", lines[i], w)
		}
	}
}

// runFor runs run in a goroutine for d of fake time, cancels it and waits
// for it to return nil.
func runFor(t *testing.T, run func(context.Context) error, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- run(ctx) }()
	time.Sleep(d)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: got error %v, want nil", err)
	}
}

func TestWatchdogNoInterval(t *testing.T) {
	err := Watchdog{Notifier: WithSend(func(string) error { return nil })}.Run(context.Background())
	if !errors.Is(err, errNoInterval) {
		t.Fatalf("got %v, want errNoInterval", err)
	}
}

func TestWatchdogRealSocket(t *testing.T) {
	sd := newFakeSystemd(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Watchdog{Notifier: &Notifier{}, Interval: time.Hour}.Run(ctx) }()
	if got := sd.next(t); got != "WATCHDOG=1" {
		t.Fatalf("got datagram %q, want WATCHDOG=1", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("got error %v, want nil", err)
	}
	sd.none(t)
}
