package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/actd/actd/notify"
	"github.com/actd/actd/prefork"
	"github.com/actd/actd/protocol"
)

// reportEvery bounds how often the reporter takes a snapshot while the pool
// changes, and how stale the requests/s figure may get while it does not.
const (
	reportEvery = time.Second
	rateRefresh = 5 * time.Second
)

// reporter turns pool snapshots into the STATUS= line.
type reporter struct {
	pool   *prefork.Pool
	status *notify.StatusCoalescer

	rates *rates

	mu       sync.Mutex
	note     string // e.g. a failed reload, shown until the next good one
	lastLine string
}

func newReporter(pool *prefork.Pool, status *notify.StatusCoalescer) *reporter {
	return &reporter{pool: pool, status: status, rates: &rates{}}
}

// run refreshes the status when the pool changes, at most once per
// reportEvery, and while the rate shown is not zero, every rateRefresh so it
// decays when idle. It returns nil when ctx is done.
func (r *reporter) run(ctx context.Context) error {
	refreshOnChange(ctx, r.pool.Changes(), r.refresh)
	return nil
}

// refreshOnChange calls refresh when changes fires, at most once per
// reportEvery, until ctx is done. After a refresh that returned a rate
// above zero it calls refresh again rateRefresh later even without a
// change, so the rate shown decays to zero; once it shows zero, only a
// change wakes it: an idle pool costs no timer. One timer serves both the
// rate limit and the decay, so a lone change costs one timer expiry, not
// two (each wakes the Go runtime's monitor thread).
//
// While a refresh is due, it stops reading changes: the pool's sends fill
// the channel's one-value buffer and then find it full, so a busy pool
// (two changes a connection) wakes this goroutine, and with it another
// thread of the master, about once per reportEvery, not at every change.
func refreshOnChange(ctx context.Context, changes <-chan struct{}, refresh func() (rate float64)) {
	timer := time.NewTimer(rateRefresh)
	defer timer.Stop()
	var last time.Time
	listen := changes
	for {
		select {
		case <-ctx.Done():
			return
		case <-listen:
			if wait := reportEvery - time.Since(last); wait > 0 {
				timer.Reset(wait) // the refresh then covers this change and the ones until then
				listen = nil
				continue
			}
		case <-timer.C:
		}
		select {
		case <-changes: // covered by this refresh
		default:
		}
		listen, last = changes, time.Now()
		if refresh() > 0 {
			timer.Reset(rateRefresh)
		} else {
			timer.Stop()
		}
	}
}

// refresh takes a snapshot and hands its line to the coalescer. It returns
// the rate the line shows (0 also when no snapshot was taken).
func (r *reporter) refresh() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	snap, err := r.pool.Snapshot(ctx)
	if err != nil {
		return 0
	}
	perSecond := r.rates.add(snap)
	r.mu.Lock()
	line := statusLine(snap, perSecond)
	if r.note != "" {
		line += "; " + r.note
	}
	r.lastLine = line
	r.mu.Unlock()
	r.status.Set(line)
	return perSecond
}

func (r *reporter) flush() {
	r.status.Flush()
}

func (r *reporter) currentNote() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.note
}

func (r *reporter) setNote(note string) {
	r.mu.Lock()
	r.note = note
	r.mu.Unlock()
	r.refresh()
}

// statusLine is the one line `systemctl status` shows, e.g.
//
//	5 busy, 3 idle, 1 starting of 9 (max 32); queue 0; 12034 served, 41/s; 2 respawned, 0 hung
func statusLine(s prefork.Snapshot, perSecond float64) string {
	var b strings.Builder
	if s.Stopping {
		fmt.Fprintf(&b, "stopping: %d draining; ", s.Draining+s.Children)
	}
	if m, _ := protocol.ParseMode(s.Mode); !m.SpeaksProtocol() {
		fmt.Fprintf(&b, "%d running of %d (shared mode: fixed size, no idle tracking)", s.Running, s.Children)
	} else {
		fmt.Fprintf(&b, "%d busy, %d idle, %d starting of %d (max %d)", s.Busy, s.Idle, s.Starting, s.Children, s.Max)
	}
	fmt.Fprintf(&b, "; queue %d; %d served, %.0f/s; %d respawned, %d hung",
		s.Queue, s.Stats.Served, perSecond, s.Stats.Respawned, s.Stats.Hung)
	if h := s.Held; h != nil {
		fmt.Fprintf(&b, "; held %d (%d ready, %d parked), oldest %v", h.Held, h.Ready, h.Parked, h.Oldest.Round(100*time.Millisecond))
	}
	if s.Failures > 0 {
		fmt.Fprintf(&b, "; worker failing (%s), %d in a row, backoff: next start in %v",
			s.LastExit, s.Failures, s.RetryIn.Round(100*time.Millisecond))
	}
	if s.Stats.AtMax {
		b.WriteString("; at max-children")
	}
	return b.String()
}
