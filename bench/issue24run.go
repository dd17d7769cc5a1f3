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

// issue24Timing is how long each part of the comparison lasts. The
// PROXY pairs (the close-8 cells of issue24Plain and issue24Proxy) get
// more, shorter rounds than the other cells: their cost is a few percent,
// so they want more runs, each pool's run right after its twin's, then
// both pools loaded at once (issue24Cell.together).
type issue24Timing struct {
	rounds      int           // interleaved rounds of the other cells: each once per round
	warmup, run time.Duration // unmeasured, then measured load per cell and round
	pairRounds  int           // rounds of the PROXY pairs: each pair's two cells back to back, then at once
	pairWarmup  time.Duration // unmeasured load before each pair run, alone or together
	pairRun     time.Duration // measured load per pair cell and round, alone
	togetherRun time.Duration // measured load of a pair's two cells at once, per round
}

// The timings of a full and a -quick run. A full run measures for about
// 6 minutes: 14 cells × 3 s × 5, 4 pair cells × 1.75 s × 11 alone and 2
// pairs × 2.25 s × 11 together, 336.5 s.
var (
	issue24Full = issue24Timing{rounds: 5, warmup: time.Second, run: 2 * time.Second,
		pairRounds: 11, pairWarmup: 250 * time.Millisecond, pairRun: 1500 * time.Millisecond, togetherRun: 2 * time.Second}
	issue24Quick = issue24Timing{rounds: 1, warmup: 500 * time.Millisecond, run: time.Second,
		pairRounds: 1, pairWarmup: 500 * time.Millisecond, pairRun: time.Second, togetherRun: time.Second}
)

// describe says in a few sentences how the rounds run, for the section.
func (t issue24Timing) describe() string {
	return fmt.Sprintf("The PROXY pairs (each worker kind's default pool without and with a v1 header, close-8): %d rounds; in each, the two pools of a pair run back to back, alternately without and with the header first, each with %v of warm-up, then a %v run (requests/s); "+
		"then both at once, each loaded by its own client of %d connections, %v of warm-up, then a %v run (server CPU per request). "+
		"The other servers and loads: %d interleaved rounds; in each, every one gets %v of warm-up, then a %v run.",
		t.pairRounds, t.pairWarmup, t.pairRun, issue24Conns, t.pairWarmup, t.togetherRun, t.rounds, t.warmup, t.run)
}

// issue24Cell is one server under one load ("close-8" or "keepalive-8"):
// its runs, or why it has none.
type issue24Cell struct {
	server, load string
	runs         []issue24Run // measured alone
	together     []issue24Run // a PROXY pair's: measured with its twin loaded at once
	err          error
}

// issue24Run is one measured run: the client's counts and the CPU the
// server used meanwhile.
type issue24Run struct {
	clientRun
	round       int           // the round it was measured in, from 0
	masterCPU   time.Duration // the main process's threads (schedstat)
	serverCPU   time.Duration // its cgroup's, or its whole process tree's (servercpu.go)
	serverKnown bool          // serverCPU was read, before and after
}

// serverPerRequest returns the server's CPU per answered request in µs,
// and false if it was not read or nothing was answered.
func (m issue24Run) serverPerRequest() (float64, bool) {
	return perRequest(m.serverCPU, m.serverKnown, m.requests)
}

// issue24Cells returns the comparison's cells (issue24Order says which
// are measured when): under close-8 every server (the PROXY protocol's
// cost is there only); under keepalive-8 the plain default pools and the
// TLS servers.
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

// runIssue24 starts every server of the comparison, measures the cells
// round by round in issue24Order (interleaved, so the shared machine's
// drift touches all alike), stops them and writes the section into o.out
// (or prints it).
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
	fmt.Fprintf(os.Stderr, "issue 24 (PROXY pairs: %d rounds of %v + %v per cell; the others: %d rounds of %v + %v; %d connections, %d processes per server):\n",
		timing.pairRounds, timing.pairWarmup, timing.pairRun, timing.rounds, timing.warmup, timing.run, issue24Conns, issue24Procs)
	procs, errs := startIssue24(t)
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	cpuFrom := issue24CPUFrom(procs)
	fmt.Fprintf(os.Stderr, "  server CPU from %s\n", cpuFrom)
	cells := issue24Cells()
	for i := range cells {
		cells[i].err = errs[cells[i].server]
	}
	for round := range max(timing.rounds, timing.pairRounds) {
		issue24Round(ctx, t, cells, procs, round, timing)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	rep := issue24Report{cells: cells, timing: timing, facts: machineFacts(root, ""), uwsgiTLS: uwsgiTLS, cpuFrom: cpuFrom,
		elapsed: time.Since(started), load: [2]string{startLoad, loadAverage()}}
	return rep.write(o.out)
}

// issue24Round measures the cells of round in issue24Order, and each
// PROXY pair together right after its two cells' runs alone.
func issue24Round(ctx context.Context, t *tools, cells []issue24Cell, procs map[string]*cpuServer, round int, timing issue24Timing) {
	order := issue24Order(cells, round, timing)
	for pos, i := range order {
		if cells[i].err != nil || ctx.Err() != nil {
			continue
		}
		cells[i].measure(ctx, t, procs[cells[i].server], round, timing)
		fmt.Fprintf(os.Stderr, "  round %d %s\n", round+1, cells[i].summary())
		if pos%2 == 1 && cells[i].isPair() { // the order starts with the pairs, two by two
			a, b := &cells[order[pos-1]], &cells[i]
			measureTogether(ctx, t, [2]*issue24Cell{a, b}, [2]*cpuServer{procs[a.server], procs[b.server]}, round, timing)
		}
	}
}

// startIssue24 starts every server of the comparison with issue24Procs
// processes, each in a cgroup of its own where one can be made. It
// returns the running ones, and the start error of the others.
func startIssue24(t *tools) (map[string]*cpuServer, map[string]error) {
	procs, errs := map[string]*cpuServer{}, map[string]error{}
	mounts := readCgroupMounts()
	for _, name := range issue24Servers {
		s, err := newSetup(t, name, fastPoolOf(issue24Procs), 0)
		if err == nil {
			procs[name], err = startCPUServer(name, t, s, mounts)
		}
		if err != nil {
			delete(procs, name)
			errs[name] = err
			fmt.Fprintf(os.Stderr, "  %s: FAILED: %v\n", name, firstLineOf(err.Error()))
		}
	}
	return procs, errs
}

// issue24CPUFrom says where the CPU time of issue 24's running servers
// was read (cpuFrom), in the order of issue24Servers.
func issue24CPUFrom(servers map[string]*cpuServer) string {
	var sources []cpuSource
	for _, name := range issue24Servers {
		if s := servers[name]; s != nil {
			sources = append(sources, sourceOf(name, s))
		}
	}
	return cpuFrom(sources)
}

// issue24Order returns the indices of the cells to measure in round
// (from 0): first, while round < timing.pairRounds, each worker kind's
// PROXY pair at close-8, its two pools back to back, without the header
// first in even rounds and with it first in odd ones (so that a drift
// within a pair favours neither); then, while round < timing.rounds,
// every other cell in its order.
func issue24Order(cells []issue24Cell, round int, timing issue24Timing) []int {
	var order []int
	inPair := map[int]bool{}
	for k, plain := range issue24Plain {
		a, b := issue24Index(cells, plain, "close-8"), issue24Index(cells, issue24Proxy[k], "close-8")
		if a < 0 || b < 0 {
			continue
		}
		inPair[a], inPair[b] = true, true
		if round%2 == 1 {
			a, b = b, a
		}
		if round < timing.pairRounds {
			order = append(order, a, b)
		}
	}
	for i := range cells {
		if !inPair[i] && round < timing.rounds {
			order = append(order, i)
		}
	}
	return order
}

// issue24Index returns the index of server's cell under load, or -1.
func issue24Index(cells []issue24Cell, server, load string) int {
	for i, c := range cells {
		if c.server == server && c.load == load {
			return i
		}
	}
	return -1
}

// isPair reports whether c is one of the PROXY pairs' cells.
func (c issue24Cell) isPair() bool {
	return c.load == "close-8" && (slices.Contains(issue24Plain, c.server) || slices.Contains(issue24Proxy, c.server))
}

// measure warms c's server up and measures one run of round, reading
// the CPU of the server's main process and of the whole server around it.
// A run in which no request was answered becomes c's error, and c is
// skipped from then on.
func (c *issue24Cell) measure(ctx context.Context, t *tools, p *cpuServer, round int, timing issue24Timing) {
	warmup, run := timing.warmup, timing.run
	if c.isPair() {
		warmup, run = timing.pairWarmup, timing.pairRun
	}
	client := newIssue24Client(issue24Speaks(c.server), t)
	keepAlive := c.load == "keepalive-8"
	client.run(ctx, addr(p.port), issue24Conns, keepAlive, warmup)
	var r clientRun
	cpu := readSched(p.pid()).cpu
	m := issue24Run{round: round}
	m.serverCPU, m.serverKnown = p.cpuAround(func() { r = client.run(ctx, addr(p.port), issue24Conns, keepAlive, run) })
	m.clientRun, m.masterCPU = r, readSched(p.pid()).cpu-cpu
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
	line := fmt.Sprintf("%-24s %-11s %6.0f req/s, %6.0f conn/s, %d failed", c.server, c.load, r.rate(), r.connRate(), r.failed)
	if us, ok := r.serverPerRequest(); ok {
		line += fmt.Sprintf(", server %.1f µs/req", us)
	}
	return line
}
