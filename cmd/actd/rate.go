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

// add records snap's served counter and returns the rate from the newest
// sample at least rateWindow older than snap (or the oldest sample, before
// there is one) to snap. It returns 0 with no older sample.
func (r *rates) add(snap prefork.Snapshot) float64 {
	now := rateSample{snap.Taken, snap.Stats.Served}
	r.mu.Lock()
	defer r.mu.Unlock()
	base := -1
	for i, s := range r.samples {
		if !s.at.Before(now.at) {
			break
		}
		if base < 0 || now.at.Sub(s.at) >= rateWindow {
			base = i
		}
	}
	if n := len(r.samples); n == 0 || r.samples[n-1].at.Before(now.at) {
		r.samples = append(r.samples, now)
	}
	if base < 0 {
		return 0
	}
	from := r.samples[base]
	r.samples = r.samples[base:] // older samples are never a base again
	if now.served < from.served {
		return 0
	}
	return float64(now.served-from.served) / now.at.Sub(from.at).Seconds()
}
