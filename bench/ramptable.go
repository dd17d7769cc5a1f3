package main

import (
	"fmt"
	"strings"
)

// writeRamps writes the scaling ramp's settings, table and plot.
func (r report) writeRamps(b *strings.Builder) {
	if len(r.ramps) == 0 {
		return
	}
	t := r.ramps[0].timing
	fmt.Fprintf(b, "### Scaling ramp\n\n%v idle, then %d clients in a closed loop (one request per connection, %v handler) for %v, then %v idle. Every server gets the same budget: actd `--start-children %d --min-spare %d --max-spare %d --max-children %d` (its defaults), Apache `StartServers %[6]d MinSpareServers %[7]d MaxSpareServers %[8]d MaxRequestWorkers %[9]d`. Every %[10]v the suite samples the pool (live children of the main process), busy (children holding an open accepted connection: ESTABLISHED or CLOSE_WAIT sockets on the port from NETLINK_SOCK_DIAG, matched by inode against each child's `/proc/PID/fd`) and the accept queue (the listener's queue length, from NETLINK_SOCK_DIAG). Latency here is the client's: connect, queue wait and answer.\n\n",
		t.idle, t.conns, t.delay, t.burst, t.after, rampPool.start, rampPool.minSpare, rampPool.maxSpare, rampPool.max, t.every)
	fmt.Fprintf(b, "| server | time to %d processes | peak busy | peak queue | burst p50 | burst p99 | served in burst | failed | back to %d processes after the burst | regrowths after the burst |\n|---|---|---|---|---|---|---|---|---|---|\n",
		rampPool.max, rampPool.maxSpare)
	for _, rr := range r.ramps {
		if rr.err != nil && len(rr.samples) == 0 {
			fmt.Fprintf(b, "| %s | failed (see below) | | | | | | | | |\n", rr.server)
			continue
		}
		m := rr.metrics()
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s | %d | %d | %s | %d |\n", rr.server, fmtSince(m.toCapacity), m.peakBusy, m.peakQueue,
			fmtDur(m.p50), fmtDur(m.p99), m.served, m.failed, fmtSince(m.toMaxSpare), m.regrowths)
	}
	fmt.Fprintf(b, "\nTimes are from the burst's start or end, to the first sample that shows it (±%v). Regrowths: times the pool grew more than %v after the burst ended, with no load (flapping).\n\n", t.every, regrowGrace)
	if r.plotName != "" {
		fmt.Fprintf(b, "![Pool size and accept queue of each server during the ramp](%s)\n\n", r.plotName)
	}
}
