package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// issue24Conns is the client's concurrency under both loads.
const issue24Conns = 8

// issue24Timing is how long each part of the comparison lasts.
type issue24Timing struct {
	rounds      int           // interleaved rounds: every cell once per round
	warmup, run time.Duration // unmeasured, then measured load per cell and round
}

// The timings of a full and a -quick run.
var (
	issue24Full  = issue24Timing{rounds: 5, warmup: time.Second, run: 2 * time.Second}
	issue24Quick = issue24Timing{rounds: 1, warmup: 500 * time.Millisecond, run: time.Second}
)

// issue24Cell is one server under one load ("close-8" or "keepalive-8"):
// its runs, or why it has none.
type issue24Cell struct {
	server, load string
	runs         []issue24Run
	err          error
}

// issue24Run is one measured run: the client's counts and the CPU the
// server's main process used meanwhile.
type issue24Run struct {
	clientRun
	masterCPU time.Duration
}

// issue24Cells returns the comparison's cells in measuring order: under
// close-8 every server (the PROXY protocol's cost is there only); under
// keepalive-8 the plain default pools and the TLS servers.
func issue24Cells() []issue24Cell {
	var cells []issue24Cell
	for _, s := range issue24Servers {
		cells = append(cells, issue24Cell{server: s, load: "close-8"})
	}
	for _, s := range slices.Concat(issue24Plain, issue24TLS) {
		cells = append(cells, issue24Cell{server: s, load: "keepalive-8"})
	}
	return cells
}

// runIssue24 starts every server of the comparison, measures every cell
// once per round (interleaved, so the shared machine's drift touches all
// alike), stops them and writes the section into o.out (or prints it).
func runIssue24(ctx context.Context, o options, t *tools, root string) error {
	started, startLoad := time.Now(), loadAverage()
	timing := issue24Full
	if o.quick {
		timing = issue24Quick
	}
	if err := writeIssue24Cert(t); err != nil {
		return err
	}
	uwsgiTLS := "yes (`uwsgi --help` lists `--https-socket`)"
	if err := checkIssue24Peers(); err != nil {
		uwsgiTLS = "no: " + err.Error()
	}
	fmt.Fprintf(os.Stderr, "issue 24 (%d rounds of %v + %v per cell, %d connections, %d processes per server):\n",
		timing.rounds, timing.warmup, timing.run, issue24Conns, issue24Procs)
	procs, errs := startIssue24(t)
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	cells := issue24Cells()
	for i := range cells {
		cells[i].err = errs[cells[i].server]
	}
	for round := range timing.rounds {
		for i := range cells {
			if cells[i].err == nil && ctx.Err() == nil {
				cells[i].measure(ctx, t, procs[cells[i].server], timing)
				fmt.Fprintf(os.Stderr, "  round %d %s\n", round+1, cells[i].summary())
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	rep := issue24Report{cells: cells, timing: timing, facts: machineFacts(root, ""), uwsgiTLS: uwsgiTLS,
		elapsed: time.Since(started), load: [2]string{startLoad, loadAverage()}}
	return rep.write(o.out)
}

// startIssue24 starts every server of the comparison with issue24Procs
// processes. It returns the running ones, and the start error of the
// others.
func startIssue24(t *tools) (map[string]*serverProc, map[string]error) {
	procs, errs := map[string]*serverProc{}, map[string]error{}
	for _, name := range issue24Servers {
		s, err := newSetup(t, name, fastPoolOf(issue24Procs), 0)
		if err == nil {
			procs[name], err = startServer(name, t, s)
		}
		if err != nil {
			delete(procs, name)
			errs[name] = err
			fmt.Fprintf(os.Stderr, "  %s: FAILED: %v\n", name, firstLineOf(err.Error()))
		}
	}
	return procs, errs
}

// measure warms c's server up and measures one run. A run in which no
// request was answered becomes c's error, and c is skipped from then on.
func (c *issue24Cell) measure(ctx context.Context, t *tools, p *serverProc, timing issue24Timing) {
	client := newIssue24Client(issue24Speaks(c.server), t)
	keepAlive := c.load == "keepalive-8"
	client.run(ctx, addr(p.port), issue24Conns, keepAlive, timing.warmup)
	cpu := readSched(p.pid()).cpu
	r := client.run(ctx, addr(p.port), issue24Conns, keepAlive, timing.run)
	m := issue24Run{clientRun: r, masterCPU: readSched(p.pid()).cpu - cpu}
	if r.requests == 0 {
		c.err = fmt.Errorf("nothing answered: %v", r.firstErr)
		return
	}
	c.runs = append(c.runs, m)
}

// summary is c's progress line: the last run's figures.
func (c issue24Cell) summary() string {
	if c.err != nil {
		return fmt.Sprintf("%-24s %-11s FAILED: %v", c.server, c.load, c.err)
	}
	r := c.runs[len(c.runs)-1]
	return fmt.Sprintf("%-24s %-11s %6.0f req/s, %6.0f conn/s, %d failed", c.server, c.load, r.rate(), r.connRate(), r.failed)
}
