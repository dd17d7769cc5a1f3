package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// rampTiming shapes the scaling experiment: idle, a burst of closed-loop
// clients on a slow handler, idle again.
type rampTiming struct {
	idle, burst, after time.Duration
	conns              int
	delay              time.Duration
	every              time.Duration // sampling period
}

var (
	defaultRampTiming = rampTiming{idle: 3 * time.Second, burst: 10 * time.Second, after: 35 * time.Second, conns: 64, delay: slowDelay, every: 100 * time.Millisecond}
	quickRampTiming   = rampTiming{idle: time.Second, burst: 3 * time.Second, after: 5 * time.Second, conns: 64, delay: slowDelay, every: 100 * time.Millisecond}
)

// rampPool is the scaling budget of both servers in the ramp: actd's
// defaults (start 2, 1-4 spare, at most 32) and the same numbers for
// Apache's StartServers, Min/MaxSpareServers and MaxRequestWorkers.
var rampPool = pool{start: 2, minSpare: 1, maxSpare: 4, max: 32, fixed: 32}

// rampSample is the pool's state at one moment.
type rampSample struct {
	at                time.Duration
	pool, busy, queue int
}

// rampResult is one server's ramp.
type rampResult struct {
	server   string
	timing   rampTiming
	samples  []rampSample
	requests []request
	err      error
	stop     error
}

// runRamp runs the ramp against server name: it starts it with rampPool,
// samples its pool every timing.every, and drives the burst. It returns the
// result, with err set if the server failed.
func runRamp(ctx context.Context, t *tools, name string, timing rampTiming) (r rampResult) {
	r = rampResult{server: name, timing: timing}
	s, err := newSetup(t, name, rampPool, timing.delay)
	if err != nil {
		r.err = err
		return r
	}
	p, err := startServer(name, t, s)
	if err != nil {
		r.err = err
		return r
	}
	defer func() { r.stop = p.stop() }()
	time.Sleep(2 * time.Second) // let the start pool settle
	t0 := time.Now()
	end := t0.Add(timing.idle + timing.burst + timing.after)
	var wg sync.WaitGroup
	wg.Go(func() { r.samples, r.err = samplePool(ctx, p, t0, end, timing.every) })
	select {
	case <-ctx.Done():
	case <-time.After(timing.idle):
	}
	r.requests = closedLoop(ctx, addr(p.port), p.path, timing.conns, t0, t0.Add(timing.idle+timing.burst))
	wg.Wait()
	return r
}

// samplePool records the pool size (live children of the main process),
// busy count (children holding an accepted connection) and accept queue every period until end. It returns the
// samples, or an error if the server exits or the socket counts cannot be
// read.
func samplePool(ctx context.Context, p *serverProc, t0, end time.Time, period time.Duration) ([]rampSample, error) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	var samples []rampSample
	for now := time.Now(); now.Before(end); now = time.Now() {
		procs := tree(p.pid())
		if procs == nil {
			return samples, fmt.Errorf("%s exited during the ramp", p.name)
		}
		counts, err := countSockets(p.port)
		if err != nil {
			return samples, err
		}
		samples = append(samples, rampSample{at: now.Sub(t0), pool: directChildren(procs), busy: busyChildren(procs, counts.inodes), queue: counts.queue})
		select {
		case <-ctx.Done():
			return samples, ctx.Err()
		case <-tick.C:
		}
	}
	return samples, nil
}

// directChildren counts the processes in procs whose parent is procs[0].
func directChildren(procs []procStat) int {
	n := 0
	for _, p := range procs[1:] {
		if p.ppid == procs[0].pid {
			n++
		}
	}
	return n
}

// runRamps runs the ramp against each server in names, one after another.
func runRamps(ctx context.Context, t *tools, names []string, timing rampTiming) []rampResult {
	var results []rampResult
	for _, name := range names {
		r := runRamp(ctx, t, name, timing)
		m := r.metrics()
		fmt.Fprintf(os.Stderr, "  %-16s ramp: capacity after %s, p99 %s, back to max-spare after %s, err %v\n",
			name, fmtSince(m.toCapacity), fmtDur(m.p99), fmtSince(m.toMaxSpare), r.err)
		results = append(results, r)
	}
	return results
}
