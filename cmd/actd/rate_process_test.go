package main

import (
	"math"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestStatusRate: under a steady client loop, the rate in `actd status`
// and in STATUS= is within 10% of the rate the client sees over the last
// rateWindow.
func TestStatusRate(t *testing.T) {
	ns := newNotifySocket(t)
	a := startActd(t, []string{ns.env()})
	ns.waitFor(t, "READY=1", -1)
	var mu sync.Mutex
	var done []time.Time
	stop := make(chan struct{})
	loop := make(chan error, 1)
	go func() {
		loop <- steadyLoad(a, 20*time.Millisecond, stop, func(at time.Time) { mu.Lock(); done = append(done, at); mu.Unlock() })
	}()
	// A window, the thing measured: the status rate counts the last
	// rateWindow, so the load runs a full window first. The comparison
	// below uses the completions counted, not the time slept.
	time.Sleep(rateWindow + 2*time.Second)
	var want float64
	for range 30 { // reads at moments all along the period between two status lines
		doc := a.status(t)
		mu.Lock()
		n := 0
		for _, at := range done {
			if age := doc.Snapshot.Taken.Sub(at); age >= 0 && age < rateWindow {
				n++
			}
		}
		mu.Unlock()
		want = float64(n) / rateWindow.Seconds()
		if math.Abs(doc.Rate-want) > want/10 {
			t.Errorf("actd status: got %.1f/s, want %.1f/s within 10%%", doc.Rate, want)
		}
		time.Sleep(50 * time.Millisecond) // pacing: the reads spread over the period between status lines
	}
	close(stop)
	if err := <-loop; err != nil {
		t.Fatal(err)
	}
	var line string
	for _, a := range ns.all() {
		if m := regexp.MustCompile(`, ([0-9]+)/s;`).FindStringSubmatch(a); m != nil {
			line = m[1]
		}
	}
	got, err := strconv.ParseFloat(line, 64)
	if err != nil || math.Abs(got-want) > want/10 {
		t.Errorf("STATUS=: got %q/s, want %.1f/s within 10%%", line, want)
	}
}

// steadyLoad sends one request to a every period until stop closes, calling
// answered with the time of each answer. It returns the first error.
func steadyLoad(a *actd, period time.Duration, stop <-chan struct{}, answered func(time.Time)) error {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		if _, err := a.get(); err != nil {
			return err
		}
		answered(time.Now())
	}
}
