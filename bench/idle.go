package main

import (
	"fmt"
	"os"
	"time"
)

// idleSettle is how long servers run before the idle window opens, so
// start-up work and first scaling decisions are over. 3 s was not: an
// actd master started with 8 children woke 6.3 times a second from 3 to
// 13 s after its start, 1.2-1.4 times from 12 s on (by hand, schedstat,
// session 6), so the table showed the start, not the idle pool issue 11
// bounds.
const idleSettle = 15 * time.Second

// idleMeasure is one server's cost while nobody talks to it.
type idleMeasure struct {
	server  string
	window  time.Duration
	master  schedStat     // CPU and wake-ups of the main process in the window, its threads at the end
	treeCPU time.Duration // CPU of the whole tree (processes alive at both ends)
	procs   int
	mem     memory // of the main process
	treeMem memory
	err     error
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
	before := make([]map[int]schedStat, len(procs))
	for i, p := range procs {
		if p != nil {
			before[i] = snapshotTree(p.pid())
		}
	}
	time.Sleep(window)
	for i, p := range procs {
		if p != nil {
			results[i].fill(p.pid(), before[i], snapshotTree(p.pid()))
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

// snapshotTree reads the scheduler account of every process in the tree
// rooted at pid.
func snapshotTree(pid int) map[int]schedStat {
	s := map[int]schedStat{}
	for _, p := range tree(pid) {
		s[p.pid] = readSched(p.pid)
	}
	return s
}

// fill sets m's figures from two snapshots of the tree rooted at pid and
// reads its memory.
func (m *idleMeasure) fill(pid int, before, after map[int]schedStat) {
	if _, ok := after[pid]; !ok {
		m.err = fmt.Errorf("%s exited while idle", m.server)
		return
	}
	m.master = schedStat{
		cpu:     after[pid].cpu - before[pid].cpu,
		runs:    after[pid].runs - before[pid].runs,
		threads: after[pid].threads,
	}
	for p, s := range after {
		if s0, ok := before[p]; ok {
			m.treeCPU += s.cpu - s0.cpu
		}
	}
	m.procs = len(after)
	m.mem = processMemory(pid)
	m.treeMem, _ = treeMemory(pid)
}
