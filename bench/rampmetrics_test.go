package main

import (
	"testing"
	"time"
)

func TestRampMetrics(t *testing.T) {
	timing := rampTiming{idle: time.Second, burst: 2 * time.Second, after: 3 * time.Second}
	s := func(ms, pool, queue int) rampSample {
		return rampSample{at: time.Duration(ms) * time.Millisecond, pool: pool, queue: queue}
	}
	r := rampResult{
		timing: timing,
		samples: []rampSample{
			s(0, 2, 0), s(1000, 2, 60), s(1500, 16, 40), s(1700, 32, 30), s(2900, 32, 30),
			s(3000, 32, 0), s(3500, 33, 0), s(4000, 31, 0), s(4500, 20, 0), s(5000, 21, 0), s(5200, 4, 0), s(5900, 4, 0),
		},
		requests: []request{
			{start: 500 * time.Millisecond, latency: time.Second, ok: true}, // before the burst: ignored
			{start: 1100 * time.Millisecond, latency: 10 * time.Millisecond, ok: true},
			{start: 1200 * time.Millisecond, latency: 30 * time.Millisecond, ok: true},
			{start: 1300 * time.Millisecond, ok: false},
		},
	}
	got := r.metrics()
	want := rampMetrics{
		toCapacity: 700 * time.Millisecond, peakPool: 33, peakBusy: 0, peakQueue: 60,
		p50: 10 * time.Millisecond, p99: 30 * time.Millisecond, served: 2, failed: 1,
		toMaxSpare: 2200 * time.Millisecond,
		regrowths:  1, // 20 → 21 at 5.0 s; 32 → 33 at 3.5 s is within the grace second
	}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestRampMetricsNeverReached(t *testing.T) {
	r := rampResult{
		timing:  rampTiming{idle: time.Second, burst: time.Second},
		samples: []rampSample{{at: 0, pool: 2}, {at: 1500 * time.Millisecond, pool: 9}, {at: 2500 * time.Millisecond, pool: 9}},
	}
	m := r.metrics()
	if m.toCapacity != never || m.toMaxSpare != never {
		t.Errorf("got toCapacity %v, toMaxSpare %v, want both never", m.toCapacity, m.toMaxSpare)
	}
	if got := fmtSince(m.toCapacity); got != "not reached" {
		t.Errorf("fmtSince(never): got %q, want %q", got, "not reached")
	}
}
