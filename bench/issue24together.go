package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// A PROXY pair's two pools measured in the same time window (together.go):
// the PROXY table takes requests/s from the runs alone and server CPU per
// request from these.

// measureTogether warms up and then loads the two cells of a pair at
// once, each through its own client of issue24Conns connections, and
// appends to each cell's together runs the run it saw, with its
// server's CPU meanwhile. A cell whose client got no answer gets no run
// (its runs alone say why, or will).
func measureTogether(ctx context.Context, t *tools, cells [2]*issue24Cell, servers [2]*cpuServer, round int, timing issue24Timing) {
	if cells[0].err != nil || cells[1].err != nil || servers[0] == nil || servers[1] == nil || ctx.Err() != nil {
		return
	}
	var clients [2]issue24Client
	for k, c := range cells {
		clients[k] = newIssue24Client(issue24Speaks(c.server), t)
	}
	var runs [2]issue24Run
	load := func(d time.Duration) func(k int) func() {
		return func(k int) func() {
			return inBackground(func() { runs[k].clientRun = clients[k].run(ctx, addr(servers[k].port), issue24Conns, false, d) })
		}
	}
	loadPair(servers, 0, load(timing.pairWarmup))
	use := loadPair(servers, 0, load(timing.togetherRun))
	for k, c := range cells {
		runs[k].round = round
		runs[k].serverCPU, runs[k].serverKnown = use[k].cpu, use[k].known
		if runs[k].requests > 0 {
			c.together = append(c.together, runs[k])
		}
	}
	fmt.Fprintf(os.Stderr, "  round %d together: %s; %s\n", round+1, togetherLine(cells[0].server, runs[0]), togetherLine(cells[1].server, runs[1]))
}

// togetherLine is one pool's part of a together run's progress line.
func togetherLine(server string, r issue24Run) string {
	us, ok := r.serverPerRequest()
	return loadLine(server, r.rate(), us, ok)
}
