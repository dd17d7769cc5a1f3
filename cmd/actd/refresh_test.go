package main

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestRefreshOnChange checks when the reporter refreshes the status: at each
// change (at most once per reportEvery), and without one only while the rate
// it shows has yet to decay to zero, so an idle pool sets no timer.
func TestRefreshOnChange(t *testing.T) {
	tests := []struct {
		name    string
		rates   []float64       // what successive refreshes return; then 0
		changes []time.Duration // when the pool changes, from the start
		wait    time.Duration
		want    int // refreshes
	}{
		{name: "idle: one refresh rateRefresh after the start, then none", wait: time.Hour, want: 1},
		{name: "a change refreshes at once, a zero rate waits for the next", changes: []time.Duration{time.Second, 30 * time.Minute}, wait: time.Hour, want: 2},
		{name: "changes within reportEvery share one refresh", changes: []time.Duration{time.Second, time.Second + reportEvery/4, time.Second + reportEvery/2}, wait: time.Minute, want: 2},
		{name: "a rate above zero is refreshed until it shows zero", rates: []float64{40, 3}, changes: []time.Duration{time.Second}, wait: time.Hour, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var calls int
				refresh := func() float64 {
					mu.Lock()
					defer mu.Unlock()
					calls++
					if calls <= len(tt.rates) {
						return tt.rates[calls-1]
					}
					return 0
				}
				changes := make(chan struct{}, 1)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan struct{})
				go func() {
					refreshOnChange(ctx, changes, refresh)
					close(done)
				}()
				start := time.Now()
				for _, at := range tt.changes {
					time.Sleep(time.Until(start.Add(at)))
					select {
					case changes <- struct{}{}:
					default:
					}
				}
				time.Sleep(time.Until(start.Add(tt.wait)))
				cancel()
				<-done
				if calls != tt.want {
					t.Errorf("got %d refreshes in %v, want %d", calls, tt.wait, tt.want)
				}
			})
		})
	}
}

// TestRefreshSparesBusyPool: while a refresh is due, a stream of changes
// (a busy pool sends two a connection) is not read one by one, which would
// wake the reporter and another thread of the master each time: at most
// one is taken and one waits in the buffer; the rest find it full.
func TestRefreshSparesBusyPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		changes := make(chan struct{}, 1)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			refreshOnChange(ctx, changes, func() float64 { calls++; return 0 })
			close(done)
		}()
		time.Sleep(time.Minute) // past the first refresh
		synctest.Wait()
		before, taken := calls, 0
		for range 100 { // within one reportEvery
			time.Sleep(reportEvery / 200)
			select {
			case changes <- struct{}{}:
				taken++
			default:
			}
			synctest.Wait() // the reporter has done what it does on a change
		}
		time.Sleep(reportEvery)
		synctest.Wait()
		cancel()
		<-done
		if taken > 3 {
			t.Errorf("got %d of 100 changes taken within one reportEvery, want at most 3", taken)
		}
		if got := calls - before; got != 2 {
			t.Errorf("got %d refreshes for the stream, want 2 (its first change, then the rest)", got)
		}
	})
}
