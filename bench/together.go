package main

import (
	"fmt"
	"sync"
	"time"
)

// Two servers measured in the same time window: both loaded at once,
// each by its own client, so that both see the same state of the shared
// machine (the other engineers' load, the CPU frequency, the caches),
// which two runs back to back do not. Each server's CPU comes from its
// own cgroup (or tree, servercpu.go), read from just before its own load
// starts to just after it ends, so the two do not mix. The servers
// compete for the CPUs then, so their requests/s are not those of a
// server alone: issue 24 takes only CPU per request from such runs
// (issue24together.go); issue 20 judges its side-by-side targets by them
// (issue20pairs.go).

// cpuUse is the CPU time a server used during its load, and whether it
// was read (cpuSince).
type cpuUse struct {
	cpu   time.Duration
	known bool
}

// loadPair starts the loads of servers[first] and then of the other
// (start(k) starts server k's load and returns a function that waits for
// its end), and waits for both. It returns the CPU each server used from
// just before its load started to just after it ended.
func loadPair(servers [2]*cpuServer, first int, start func(k int) (wait func())) [2]cpuUse {
	var before [2]cpuReading
	var waits [2]func()
	for _, k := range [2]int{first, 1 - first} {
		before[k] = servers[k].cpuNow()
		waits[k] = start(k)
	}
	var use [2]cpuUse
	var wg sync.WaitGroup
	for k := range servers {
		wg.Go(func() {
			waits[k]()
			use[k].cpu, use[k].known = servers[k].cpuSince(before[k])
		})
	}
	wg.Wait()
	return use
}

// inBackground runs f in a goroutine of its own and returns a function
// that waits for f to return: a load's start for loadPair, for a client
// that runs in the suite's own process.
func inBackground(f func()) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return func() { <-done }
}

// loadLine is one server's part of a progress line: its requests/s and,
// if known, its CPU per request in µs.
func loadLine(server string, rate, us float64, known bool) string {
	line := fmt.Sprintf("%s %.0f req/s", server, rate)
	if known {
		line += fmt.Sprintf(", server %.1f µs/req", us)
	}
	return line
}
