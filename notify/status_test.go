package notify

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

const ms = time.Millisecond

// setAt is one Set call at a fake time.
type setAt struct {
	at   time.Duration
	line string
}

// every300ms sets "l0", "l1", ... every 300 ms from 0 until before end.
func every300ms(end time.Duration) []setAt {
	var sets []setAt
	for i := 0; time.Duration(i)*300*ms < end; i++ {
		sets = append(sets, setAt{time.Duration(i) * 300 * ms, fmt.Sprintf("l%d", i)})
	}
	return sets
}

func TestStatusCoalescer(t *testing.T) {
	tests := []struct {
		name      string
		sets      []setAt
		stop      time.Duration
		failFirst int
		want      []sent
	}{
		{
			name: "first line goes at once",
			sets: []setAt{{0, "a"}}, stop: 5 * sec,
			want: []sent{{0, "STATUS=a"}},
		},
		{
			name: "a burst sends its first and then its latest line a period later",
			sets: []setAt{{0, "a"}, {100 * ms, "b"}, {500 * ms, "c"}}, stop: 5 * sec,
			want: []sent{{0, "STATUS=a"}, {sec, "STATUS=c"}},
		},
		{
			name: "an unchanged line is not sent again",
			sets: []setAt{{0, "a"}, {2 * sec, "a"}}, stop: 5 * sec,
			want: []sent{{0, "STATUS=a"}},
		},
		{
			name: "a line changed back within the period is not sent again",
			sets: []setAt{{0, "a"}, {200 * ms, "b"}, {400 * ms, "a"}}, stop: 5 * sec,
			want: []sent{{0, "STATUS=a"}},
		},
		{
			name: "a line after a quiet spell goes at once",
			sets: []setAt{{0, "a"}, {3500 * ms, "b"}}, stop: 5 * sec,
			want: []sent{{0, "STATUS=a"}, {3500 * ms, "STATUS=b"}},
		},
		{
			name: "a steady stream sends once per period",
			sets: every300ms(3 * sec), stop: 5 * sec,
			want: []sent{{0, "STATUS=l0"}, {sec, "STATUS=l3"}, {2 * sec, "STATUS=l6"}, {3 * sec, "STATUS=l9"}},
		},
		{
			name: "the last line is flushed when Run ends",
			sets: []setAt{{0, "a"}, {500 * ms, "b"}}, stop: 700 * ms,
			want: []sent{{0, "STATUS=a"}, {700 * ms, "STATUS=b"}},
		},
		{
			name: "a failed send is retried by the final flush",
			sets: []setAt{{0, "a"}}, stop: 2 * sec, failFirst: 1,
			want: []sent{{2 * sec, "STATUS=a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newRecorder()
				rec.failFirst = tt.failFirst
				var logs bytes.Buffer
				c := NewStatusCoalescer(WithSend(rec.send), 0, slog.New(slog.NewTextHandler(&logs, nil)))
				runFor(t, func(ctx context.Context) error {
					go c.Run(ctx)
					return playSets(ctx, c, tt.sets)
				}, tt.stop)
				synctest.Wait()
				if got := rec.got(); !sameSends(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				if gotFail := strings.Count(logs.String(), "send failed"); gotFail != tt.failFirst {
					t.Fatalf("got %d logged failures, want %d: %s", gotFail, tt.failFirst, logs.String())
				}
			})
		})
	}
}

// playSets calls c.Set at the fake times of sets, then waits for ctx.
func playSets(ctx context.Context, c *StatusCoalescer, sets []setAt) error {
	start := time.Now()
	for _, s := range sets {
		time.Sleep(s.at - time.Since(start))
		c.Set(s.line)
	}
	<-ctx.Done()
	return nil
}

func TestStatusCoalescerSetDoesNotAllocate(t *testing.T) {
	c := NewStatusCoalescer(WithSend(func(string) error { return nil }), 0, nil)
	lines := []string{"5 busy, 3 idle", "6 busy, 2 idle"}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		c.Set(lines[i%2])
		i++
	})
	if allocs != 0 {
		t.Fatalf("got %v allocations per Set, want 0", allocs)
	}
}

func TestStatusCoalescerRealSocket(t *testing.T) {
	sd := newFakeSystemd(t)
	c := NewStatusCoalescer(&Notifier{}, time.Hour, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	c.Set("1 busy, 1 idle")
	if got := sd.next(t); got != "STATUS=1 busy, 1 idle" {
		t.Fatalf("got datagram %q, want the first line", got)
	}
	c.Set("2 busy, 0 idle") // held back: the period is an hour
	c.Set("0 busy, 2 idle")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: got error %v, want nil", err)
	}
	if got := sd.next(t); got != "STATUS=0 busy, 2 idle" {
		t.Fatalf("got datagram %q, want the last line, flushed", got)
	}
	sd.none(t)
	if err := c.Flush(); err != nil {
		t.Fatalf("Flush: got error %v, want nil", err)
	}
	sd.none(t)
}

func BenchmarkStatusCoalescerSet(b *testing.B) {
	c := NewStatusCoalescer(WithSend(func(string) error { return nil }), 0, nil)
	lines := []string{"5 busy, 3 idle", "6 busy, 2 idle"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Set(lines[i&1])
	}
}
