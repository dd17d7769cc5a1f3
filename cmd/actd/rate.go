package main

import (
	"sync"
	"time"

	"github.com/actd/actd/prefork"
)

// rateWindow is the span the requests/s figure of STATUS= and `actd status`
// is averaged over.
const rateWindow = 10 * time.Second

// rates turns samples of the served counter, each with the time its
// snapshot was taken, into connections per second over the last rateWindow.
// Its zero value is ready to use.
type rates struct {
	mu      sync.Mutex
	samples []rateSample // oldest first
}

type rateSample struct {
	at     time.Time
	served uint64
}

// add records snap's served counter and returns the connections per second
// over the rateWindow that ends at snap. The counter at the window's start
// is interpolated between the samples around it (exact across a quiet
// spell, when the two are equal); before there is a sample that old, the
// rate is over the time since the oldest sample. It returns 0 with no older
// sample.
func (r *rates) add(snap prefork.Snapshot) float64 {
	now := rateSample{snap.Taken, snap.Stats.Served}
	r.mu.Lock()
	defer r.mu.Unlock()
	older := r.samples
	for len(older) > 0 && !older[len(older)-1].at.Before(now.at) {
		older = older[:len(older)-1] // a reader's snapshot may be older than the reporter's
	}
	if n := len(r.samples); n == 0 || r.samples[n-1].at.Before(now.at) {
		r.samples = append(r.samples, now)
	}
	if len(older) == 0 {
		return 0
	}
	start := now.at.Add(-rateWindow)
	i := 0
	for i+1 < len(older) && !older[i+1].at.After(start) {
		i++
	}
	r.samples = r.samples[i:] // samples before i are never needed again
	base := older[i]
	if !base.at.Before(start) || now.served < base.served {
		if now.served < base.served {
			return 0
		}
		return float64(now.served-base.served) / now.at.Sub(base.at).Seconds()
	}
	next := now
	if i+1 < len(older) {
		next = older[i+1]
	}
	frac := start.Sub(base.at).Seconds() / next.at.Sub(base.at).Seconds()
	atStart := float64(base.served) + frac*float64(next.served-base.served)
	return (float64(now.served) - atStart) / rateWindow.Seconds()
}
