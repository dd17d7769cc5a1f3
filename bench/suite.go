package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

// cell is one server under one load: its runs, or why it has none.
type cell struct {
	server string
	load   load
	runs   []runMeasure
	cpu    cpuSource // where the server's CPU time was read
	err    error     // set when the server could not be measured
	stop   error     // set when the server did not stop cleanly
}

// runMatrix measures every server under every load, and issue 20's
// target pairs loaded together (issue20pairs.go). It returns the cells in
// load-major order and the pairs in load and target order; failures are
// kept in them.
func runMatrix(ctx context.Context, o options, t *tools, w wrkRunner) ([]cell, []pairCell) {
	var cells []cell
	var pairs []pairCell
	for _, name := range o.loads {
		if ctx.Err() != nil {
			break
		}
		l, _ := loadByName(name)
		c, p := measureLoad(ctx, o, t, w, l)
		cells, pairs = append(cells, c...), append(pairs, p...)
	}
	return cells, pairs
}

// measureLoad starts every server for l and measures them in rounds: each
// of the first o.runs rounds warms up and measures each server in turn;
// each of the first o.pairRuns then loads the two servers of each of
// issue 20's target pairs under l together. This shared machine's speed
// drifts over minutes; interleaving lets the drift touch every server
// alike, so ratios within one run compare like with like. A server that
// fails keeps its error and is skipped in later rounds.
func measureLoad(ctx context.Context, o options, t *tools, w wrkRunner, l load) ([]cell, []pairCell) {
	cells := make([]cell, len(o.servers))
	procs := make([]*cpuServer, len(o.servers))
	for i, srv := range o.servers {
		cells[i] = cell{server: srv, load: l}
		procs[i], cells[i].err = startFor(t, srv, l, o.pool)
		if procs[i] != nil {
			cells[i].cpu = sourceOf(srv, procs[i])
		}
	}
	pairs := pairsFor(o.servers, l)
	for round := range max(o.runs, o.pairRuns) {
		if round < o.runs {
			measureAlone(ctx, o, w, l, cells, procs)
		}
		for i := range pairs {
			if round < o.pairRuns {
				pairs[i].measure(ctx, o, w, l, running(cells, procs), round)
			}
		}
	}
	for i, p := range procs {
		if p != nil {
			cells[i].stop = p.stop()
		}
		logCell(cells[i])
	}
	return cells, pairs
}

// measureAlone warms up and measures each server of cells (running as
// procs) in turn, once, each alone.
func measureAlone(ctx context.Context, o options, w wrkRunner, l load, cells []cell, procs []*cpuServer) {
	for i := range cells {
		if cells[i].err != nil || ctx.Err() != nil {
			continue
		}
		m, err := warmAndMeasure(ctx, o, w, procs[i], l)
		if err != nil {
			cells[i].err = err
			continue
		}
		cells[i].runs = append(cells[i].runs, m)
	}
}

// running returns the servers of cells that run and have not failed, by
// name.
func running(cells []cell, procs []*cpuServer) map[string]*cpuServer {
	byName := map[string]*cpuServer{}
	for i, c := range cells {
		if c.err == nil && procs[i] != nil {
			byName[c.server] = procs[i]
		}
	}
	return byName
}

// startFor starts srv with the process budget and delay of l, the fast
// loads getting size processes, in a cgroup of its own where one can be
// made (startCPUServer).
func startFor(t *tools, srv string, l load, size int) (*cpuServer, error) {
	s, err := newSetup(t, srv, poolFor(l, size), l.delay)
	if err != nil {
		return nil, err
	}
	p, err := startCPUServer(srv, t, s, readCgroupMounts())
	if err == nil && countsHeld(srv) && t.actd != "" {
		p.held = heldCounter(t.actd, controlSocket(s))
	}
	return p, err
}

// warmAndMeasure puts unmeasured load on p (long enough for a scaling
// server to grow to what l needs), then measures one run.
func warmAndMeasure(ctx context.Context, o options, w wrkRunner, p *cpuServer, l load) (runMeasure, error) {
	warmup := o.warmup
	if l.delay > 0 {
		warmup = o.slowWarmup
	}
	if _, err := w.run(ctx, p.url(), l, warmup); err != nil {
		return runMeasure{}, fmt.Errorf("warm-up: %w", err)
	}
	return p.countHeld(func() (runMeasure, error) { return measureRun(ctx, w, p, l, o.duration) })
}

// newSetup makes a fresh directory for one start of srv and picks a free
// port. It returns an error if either fails.
func newSetup(t *tools, srv string, p pool, delay time.Duration) (setup, error) {
	dir, err := os.MkdirTemp(t.dir, srv+"-")
	if err != nil {
		return setup{}, err
	}
	// Apache's children run as www-data and read their files from here.
	if err := os.Chmod(dir, 0o755); err != nil {
		return setup{}, err
	}
	port, err := freePort()
	if err != nil {
		return setup{}, err
	}
	return setup{pool: p, delay: delay, port: port, dir: dir}, nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// logCell prints one line of progress for c.
func logCell(c cell) {
	if c.err != nil {
		fmt.Fprintf(os.Stderr, "  %-22s %-12s FAILED: %v\n", c.server, c.load.name, c.err)
		return
	}
	rates := make([]float64, len(c.runs))
	for i, r := range c.runs {
		rates[i] = r.wrk.rate()
	}
	fmt.Fprintf(os.Stderr, "  %-22s %-12s %s req/s\n", c.server, c.load.name, spread(rates, "%.0f"))
	if c.stop != nil {
		fmt.Fprintf(os.Stderr, "  %-22s stop: %v\n", c.server, c.stop)
	}
}
