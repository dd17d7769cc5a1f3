package main

import (
	"fmt"
	"os"
	"time"
)

// idleSettle is how long servers run before the idle window opens, so
// start-up work and first scaling decisions are over.
const idleSettle = 3 * time.Second

// idleMeasure is one server's cost while nobody talks to it.
type idleMeasure struct {
	server      string
	window      time.Duration
	masterTicks uint64 // CPU ticks of the main process in the window
	masterRuns  uint64 // times the main process's threads were put on a CPU
	treeTicks   uint64 // CPU ticks of the whole tree (processes alive at both ends)
	procs       int
	master      memory
	tree        memory
	err         error
}

// measureIdle starts every server in names at once with the fast pool,
// lets them settle, and measures their CPU over window. Servers that fail
// to start are reported with err set.
func measureIdle(t *tools, names []string, window time.Duration) []idleMeasure {
	results := make([]idleMeasure, len(names))
	procs := make([]*serverProc, len(names))
	for i, name := range names {
		results[i] = idleMeasure{server: name, window: window}
		s, err := newSetup(t, name, fastPool, 0)
		if err == nil {
			procs[i], err = startServer(name, t, s)
		}
		results[i].err = err
	}
	defer stopAll(procs)
	time.Sleep(idleSettle)
	before := make([]idleSnapshot, len(procs))
	for i, p := range procs {
		if p != nil {
			before[i] = snapshotIdle(p.pid())
		}
	}
	time.Sleep(window)
	for i, p := range procs {
		if p != nil {
			results[i].fill(before[i], snapshotIdle(p.pid()))
		}
	}
	return results
}

// stopAll stops every non-nil server and reports unclean stops on stderr.
func stopAll(procs []*serverProc) {
	for _, p := range procs {
		if p == nil {
			continue
		}
		if err := p.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "  stop:", err)
		}
	}
}

// idleSnapshot is the CPU counters of a tree at one moment.
type idleSnapshot struct {
	master procStat
	runs   uint64
	ticks  map[int]uint64 // per process in the tree
}

// snapshotIdle reads the counters of the tree rooted at pid.
func snapshotIdle(pid int) idleSnapshot {
	s := idleSnapshot{runs: schedRuns(pid), ticks: map[int]uint64{}}
	for i, p := range tree(pid) {
		if i == 0 {
			s.master = p
		}
		s.ticks[p.pid] = p.ticks
	}
	return s
}

// fill sets m's counters from two snapshots and reads the tree's memory.
func (m *idleMeasure) fill(before, after idleSnapshot) {
	if after.master.pid == 0 {
		m.err = fmt.Errorf("%s exited while idle", m.server)
		return
	}
	m.masterTicks = after.master.ticks - before.master.ticks
	m.masterRuns = after.runs - before.runs
	for pid, t := range after.ticks {
		if t0, ok := before.ticks[pid]; ok {
			m.treeTicks += t - t0
		}
	}
	m.procs = len(after.ticks)
	m.master = processMemory(after.master.pid)
	m.tree, _ = treeMemory(after.master.pid)
}
