package main

import (
	"fmt"
	"slices"
	"time"
)

// regrowGrace is one scale period: a scaler may still act on the burst's
// last second just after it ended.
const regrowGrace = time.Second

// never marks a moment that did not come within the experiment.
const never = time.Duration(-1)

// rampMetrics are the figures of one ramp.
type rampMetrics struct {
	toCapacity time.Duration // from burst start until the pool first held max processes; never if it did not
	peakPool   int
	peakBusy   int
	peakQueue  int
	p50, p99   time.Duration // latency of the requests started during the burst
	served     int           // requests answered with 200 during the burst
	failed     int
	toMaxSpare time.Duration // from burst end until the pool first shrank to max-spare; never if it did not
	regrowths  int           // times the pool grew more than regrowGrace after the burst ended (flapping)
}

// metrics computes r's figures.
func (r rampResult) metrics() rampMetrics {
	burstStart, burstEnd := r.timing.idle, r.timing.idle+r.timing.burst
	m := rampMetrics{toCapacity: never, toMaxSpare: never}
	var prev *rampSample
	for i, s := range r.samples {
		m.peakPool, m.peakBusy, m.peakQueue = max(m.peakPool, s.pool), max(m.peakBusy, s.busy), max(m.peakQueue, s.queue)
		if s.at >= burstStart && s.pool >= rampPool.max && m.toCapacity == never {
			m.toCapacity = s.at - burstStart
		}
		if s.at >= burstEnd && s.pool <= rampPool.maxSpare && m.toMaxSpare == never {
			m.toMaxSpare = s.at - burstEnd
		}
		if prev != nil && prev.at >= burstEnd+regrowGrace && s.pool > prev.pool {
			m.regrowths++
		}
		prev = &r.samples[i]
	}
	var lat []time.Duration
	for _, q := range r.requests {
		if q.start < burstStart || q.start >= burstEnd {
			continue
		}
		if !q.ok {
			m.failed++
			continue
		}
		m.served++
		lat = append(lat, q.latency)
	}
	m.p50, m.p99 = percentile(lat, 50), percentile(lat, 99)
	return m
}

// percentile returns the p-th percentile of ds by the nearest-rank method,
// or 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank-1, 0)]
}

// fmtSince formats a duration measured from an event, or "not reached".
func fmtSince(d time.Duration) string {
	if d == never {
		return "not reached"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// fmtDur formats a latency in milliseconds.
func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
