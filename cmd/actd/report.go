package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/actd/actd/notify"
	"github.com/actd/actd/prefork"
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
// reportEvery, and every rateRefresh so the rate decays when idle. It
// returns nil when ctx is done.
func (r *reporter) run(ctx context.Context) error {
	tick := time.NewTicker(rateRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.pool.Changes():
		case <-tick.C:
		}
		r.refresh()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(reportEvery):
		}
	}
}

// refresh takes a snapshot and hands its line to the coalescer.
func (r *reporter) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	snap, err := r.pool.Snapshot(ctx)
	if err != nil {
		return
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
	if s.Mode == "shared" {
		fmt.Fprintf(&b, "%d running of %d (shared mode: fixed size, no idle tracking)", s.Running, s.Children)
	} else {
		fmt.Fprintf(&b, "%d busy, %d idle, %d starting of %d (max %d)", s.Busy, s.Idle, s.Starting, s.Children, s.Max)
	}
	fmt.Fprintf(&b, "; queue %d; %d served, %.0f/s; %d respawned, %d hung",
		s.Queue, s.Stats.Served, perSecond, s.Stats.Respawned, s.Stats.Hung)
	if s.Failures > 0 {
		fmt.Fprintf(&b, "; worker failing (%s), %d in a row, backoff: next start in %v",
			s.LastExit, s.Failures, s.RetryIn.Round(100*time.Millisecond))
	}
	if s.Stats.AtMax {
		b.WriteString("; at max-children")
	}
	return b.String()
}
