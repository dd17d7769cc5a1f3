//go:build integration

package integration

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStopDrains is scenario 5: systemctl stop with 20 slow connections in
// flight lets all 20 finish; connections that arrive while the service stops
// wait in the socket (systemd holds it) and are served after the next start.
func TestStopDrains(t *testing.T) {
	const inFlight, late = 20, 5
	a := NewActdBox(t)
	pool := Pool{
		Port:   freePort(t),
		Config: "handler-delay = 6s\nstart-children = 24\nmin-children = 24\nmax-children = 32\n",
	}
	a.SetUp(pool)
	watch := a.Watch(serviceUnit)
	before := a.Activate(pool.Addr(), serviceUnit)

	slow := fanOut(pool.Addr(), inFlight, 60*time.Second)
	// Within the handler's delay, while all 20 are still in flight.
	a.WaitPoolLine(serviceUnit, 5*time.Second, "20 busy", func(n []int) bool { return n[poolBusy] >= inFlight })

	stopped := make(chan error, 1)
	go func() {
		out, err := a.RunErr("systemctl", "stop", serviceUnit)
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, out)
		}
		stopped <- err
	}()
	waitService(t, a.Bus, serviceUnit, 10*time.Second, "stopping", func(s ServiceState) bool {
		return s.ActiveState == "deactivating" || s.ActiveState == "inactive"
	})
	queued := fanOut(pool.Addr(), late, 60*time.Second)

	if err := <-stopped; err != nil {
		t.Errorf("systemctl stop %s: %v", serviceUnit, err)
	}
	for i, r := range slow.wait() {
		if r.err != nil {
			t.Errorf("slow connection %d in flight at stop: %v, want its full answer", i, r.err)
		}
	}
	for i, r := range queued.wait() {
		if r.err != nil {
			t.Errorf("connection %d made while stopping: %v, want it served after the next start", i, r.err)
		}
	}
	requireSaw(t, watch, "Unit.ActiveState", "inactive")
	after := serviceState(t, a.Bus, serviceUnit)
	if after.MainPID == before.MainPID {
		t.Errorf("MainPID: got %d again, want a new master for the late connections", after.MainPID)
	}
	if after.NRestarts != 0 {
		t.Errorf("NRestarts: got %d, want 0 (a clean stop and a socket-triggered start)", after.NRestarts)
	}
	// systemd 252 logs how the stop ended.
	journal := a.Journal(serviceUnit)
	if !strings.Contains(journal, "Deactivated successfully") || strings.Contains(journal, "Failed with result") {
		t.Errorf("journal of %s: want \"Deactivated successfully\" and no \"Failed with result\" (master exits 0 after the drain)", serviceUnit)
	}
}

// fanResult is one request's outcome in a fan-out.
type fanResult struct {
	answer Answer
	err    error
}

// fan is a set of requests sent at once.
type fan struct {
	wg      sync.WaitGroup
	results []fanResult
}

// fanOut sends count requests to addr at once, each on its own connection
// with timeout to be answered.
func fanOut(addr string, count int, timeout time.Duration) *fan {
	f := &fan{results: make([]fanResult, count)}
	for i := range count {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			a, err := get(addr, timeout)
			f.results[i] = fanResult{a, err}
		}()
	}
	return f
}

// wait returns the outcomes once every request has one.
func (f *fan) wait() []fanResult {
	f.wg.Wait()
	return f.results
}
