package main

import (
	"math"
	"testing"
	"time"

	"github.com/actd/actd/prefork"
)

func snapAt(at time.Time, served uint64) prefork.Snapshot {
	return prefork.Snapshot{Taken: at, Stats: prefork.Stats{Served: served}}
}

// TestRates: the rate is taken over at least rateWindow once there are
// samples that old, however often the counter is sampled.
func TestRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, tc := range []struct {
		name    string
		samples []prefork.Snapshot // the last one is the rate asked for
		want    float64
	}{
		{"first sample", []prefork.Snapshot{snapAt(sec(0), 5)}, 0},
		{"younger than the window", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(2), 100)}, 50},
		{"window starts inside a busy spell", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(1), 160),
			snapAt(sec(10), 160), snapAt(sec(10.1), 161)}, (161 - 16) / 10.0},
		{"window starts inside a quiet spell", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(5), 1000),
			snapAt(sec(10), 1000), snapAt(sec(16), 1060)}, 6},
		{"after a long idle time", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(60), 0), snapAt(sec(63), 150)}, 15},
		{"no sample between", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(20), 200)}, 10},
		{"same snapshot twice", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(20), 200), snapAt(sec(20), 200)}, 10},
		{"an older snapshot after a newer one", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(12), 120),
			snapAt(sec(11), 110)}, 10},
		{"a sample exactly at the window's start", []prefork.Snapshot{snapAt(sec(0), 0), snapAt(sec(2), 100),
			snapAt(sec(12), 300)}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rates
			var got float64
			for _, s := range tc.samples {
				got = r.add(s)
			}
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("got %v/s, want %v/s", got, tc.want)
			}
		})
	}
}
