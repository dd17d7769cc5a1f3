package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The CPU time of a server's whole process tree, master and children,
// read from /proc/PID/stat: the suite runs servers in a process group of
// their own, not in a cgroup of their own, so there is no cgroup
// cpu.stat to read. A child that exits is still counted once its parent
// has waited for it: the kernel then adds its time (and that of the
// children it waited for) to the parent's cutime and cstime. What it
// misses: a process that leaves the tree before it exits (reparented to
// init or a subreaper), a child of a parent that ignores SIGCHLD, and a
// child reaped between the reading of its parent and its own (each
// snapshot reads the processes one by one).

// statTick is the unit of the CPU times in /proc/PID/stat: USER_HZ,
// which is 100 on every architecture Linux runs this suite on
// (`getconf CLK_TCK`). The kernel rounds each process's exact run time
// down to it, so a difference of two readings is within a tick per
// process.
const statTick = 10 * time.Millisecond

// statCPU is the CPU time fields of one /proc/PID/stat.
type statCPU struct {
	own      time.Duration // utime + stime: the process's threads, live and exited
	children time.Duration // cutime + cstime: the children it waited for, and theirs
}

// parseStatCPU reads utime, stime, cutime and cstime (fields 14 to 17)
// from the text of a /proc/PID/stat file, counting fields from the last
// ')' as parseStat does. It returns an error for a malformed line.
func parseStatCPU(b []byte) (statCPU, error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return statCPU{}, fmt.Errorf("stat: no command name in %q", b)
	}
	fields := strings.Fields(string(b[end+1:])) // fields[0] is field 3, the state
	if len(fields) < 15 {
		return statCPU{}, fmt.Errorf("stat: %d fields after the name, want at least 15", len(fields))
	}
	var ticks [4]uint64
	for i := range ticks {
		n, err := strconv.ParseUint(fields[11+i], 10, 64)
		if err != nil {
			return statCPU{}, fmt.Errorf("stat field %d: %w", 14+i, err)
		}
		ticks[i] = n
	}
	return statCPU{own: time.Duration(ticks[0]+ticks[1]) * statTick, children: time.Duration(ticks[2]+ticks[3]) * statTick}, nil
}

// treeTimes is one snapshot of the CPU time a process tree has used.
type treeTimes struct {
	cpu   time.Duration // own and children's time, summed over the tree
	procs int           // processes read, zombies included; 0 if the root was gone
}

// readTreeTimes sums the own and children's CPU time of root and of
// every descendant, zombies included (a zombie's time moves to its
// parent's children's time when it is reaped). It returns the zero value
// if root is gone; descendants that vanish while it reads are skipped.
func readTreeTimes(root int) treeTimes {
	var t treeTimes
	for _, pid := range descendants(root, allStats()) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			if pid == root {
				return treeTimes{}
			}
			continue
		}
		s, err := parseStatCPU(b)
		if err != nil {
			continue
		}
		t.cpu += s.own + s.children
		t.procs++
	}
	return t
}

// descendants returns root and every process below it in stats, root
// first and parents before their children, zombies included. It returns
// nil if root is not in stats.
func descendants(root int, stats []procStat) []int {
	children := map[int][]int{}
	found := false
	for _, s := range stats {
		children[s.ppid] = append(children[s.ppid], s.pid)
		found = found || s.pid == root
	}
	if !found {
		return nil
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// cpuBetween returns the CPU time the tree used from snapshot a to
// snapshot b. It returns false if either found no tree (the root was
// gone) or the time went backwards (a process that left the tree before
// it was reaped).
func cpuBetween(a, b treeTimes) (time.Duration, bool) {
	if a.procs == 0 || b.procs == 0 || b.cpu < a.cpu {
		return 0, false
	}
	return b.cpu - a.cpu, true
}
