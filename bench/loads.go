package main

import (
	"fmt"
	"time"
)

// load is one traffic shape driven by wrk.
type load struct {
	name      string
	conns     int           // concurrent connections
	keepAlive bool          // false: one request per connection (Connection: close)
	delay     time.Duration // handler delay per request; 0 for the tiny response
}

// slowDelay is the handler delay of the slow load.
const slowDelay = 20 * time.Millisecond

// loads lists every load in table order.
var loads = []load{
	{name: "close-1", conns: 1},
	{name: "close-8", conns: 8},
	{name: "close-64", conns: 64},
	{name: "keepalive-8", conns: 8, keepAlive: true},
	{name: "slow-64", conns: 64, delay: slowDelay},
}

// loadNamesList returns the names of loads in table order.
func loadNamesList() []string {
	names := make([]string, len(loads))
	for i, l := range loads {
		names[i] = l.name
	}
	return names
}

// loadByName returns the load called name and true, or false if there is none.
func loadByName(name string) (load, bool) {
	for _, l := range loads {
		if l.name == name {
			return l, true
		}
	}
	return load{}, false
}

// title describes l for a table heading.
func (l load) title() string {
	switch {
	case l.delay > 0:
		return fmt.Sprintf("Slow handler (%v per request), one request per connection, concurrency %d, pool up to %d", l.delay, l.conns, slowPool.max)
	case l.keepAlive:
		return fmt.Sprintf("Keep-alive, concurrency %d", l.conns)
	default:
		return fmt.Sprintf("One request per connection (Connection: close), concurrency %d", l.conns)
	}
}

// pool is the process budget a server gets. A scaling server (actd, Apache)
// starts start processes, keeps between minSpare and maxSpare idle ones and
// never runs more than max; a fixed-size server (baseline, gunicorn) runs
// fixed processes.
type pool struct {
	start, minSpare, maxSpare, max int
	fixed                          int // size of a fixed pool (baseline, gunicorn)
}

// fastPool is the budget for the tiny-response loads: 8 processes for
// every server (enough to hold 8 keep-alive connections), so throughput is
// compared at the same process count. Given room to grow, actd and Apache
// grow to their cap under concurrency 64 because the accept queue is never
// empty, and on 2 cores the extra processes cost throughput. -pool
// changes the count (fastPoolOf).
var fastPool = fastPoolOf(8)

// slowPool is the budget for the slow load: up to 32 processes; fixed pools
// run all 32 from the start.
var slowPool = pool{start: 8, minSpare: 2, maxSpare: 8, max: 32, fixed: 32}

// fastPoolOf returns a budget of n processes for the tiny-response loads:
// scaling servers start and stay at n, fixed ones run n.
func fastPoolOf(n int) pool {
	return pool{start: n, minSpare: min(2, n), maxSpare: n, max: n, fixed: n}
}

// poolFor returns the process budget for l when the fast loads get size
// processes: slowPool for the slow load; for a keep-alive load at least
// one process per connection, since a child (or a gunicorn or uWSGI
// worker) holds a kept-alive connection to its end and wrk's others would
// wait behind it; else fastPoolOf(size).
func poolFor(l load, size int) pool {
	switch {
	case l.delay > 0:
		return slowPool
	case l.keepAlive:
		return fastPoolOf(max(size, l.conns))
	}
	return fastPoolOf(size)
}
