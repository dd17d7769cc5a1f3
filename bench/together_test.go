package main

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestLoadPair: two shells, each in a cgroup of its own, are "loaded"
// together, the one named first started first. One spins for 50 ms of
// CPU (cpuBusy) once loaded, the other did before it was loaded: each
// server's use is read against its own reading before its load, so only
// the first counts 50 ms, whichever starts first.
func TestLoadPair(t *testing.T) {
	for _, first := range []int{0, 1} {
		spinning := 1 - first // the one started second spins
		t.Run([]string{"first 0", "first 1"}[first], func(t *testing.T) {
			var servers [2]*cpuServer
			var stdins [2]func()
			for k := range servers {
				script, before := cpuBusy+"; read _; exec sleep 30", 50*time.Millisecond // used before its load
				if k == spinning {
					script, before = "read _; "+cpuBusy+"; exec sleep 30", 0
				}
				servers[k], stdins[k] = startShell(t, script, testGroup(t, fmt.Sprint("-", k)), before)
			}
			var order []int
			use := loadPair(servers, first, func(k int) func() {
				order = append(order, k)
				stdins[k]()
				return func() { waitShell(t, servers[k].pid(), "sleep\n", servers[k].group) }
			})
			if want := []int{first, 1 - first}; !slices.Equal(order, want) {
				t.Errorf("got loads started in order %v, want %v", order, want)
			}
			if u := use[spinning]; !u.known || u.cpu < 30*time.Millisecond || u.cpu > 500*time.Millisecond {
				t.Errorf("spinning server %d: got %v (read: %v), want 30 ms to 500 ms", spinning, u.cpu, u.known)
			}
			if u := use[1-spinning]; !u.known || u.cpu >= 30*time.Millisecond {
				t.Errorf("idle server %d: got %v (read: %v), want under 30 ms", 1-spinning, u.cpu, u.known)
			}
		})
	}
}
