package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// procStat is the part of /proc/PID/stat the suite uses.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
}

// readStat parses /proc/PID/stat. It returns an error if the process is
// gone or the file does not parse.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat parses the text of a /proc/PID/stat file. The command name in
// parentheses may itself hold spaces and parentheses, so fields are counted
// from the last ')'. It returns an error for a malformed line.
func parseStat(b []byte) (procStat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("stat: no command name in %q", b)
	}
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) < 3 {
		return procStat{}, fmt.Errorf("stat: %d fields after the name, want at least 3", len(fields))
	}
	var s procStat
	var err error
	nums := []struct {
		dst *int
		src string
	}{{&s.pid, strings.TrimSpace(string(b[:open]))}, {&s.ppid, fields[1]}, {&s.pgrp, fields[2]}}
	for _, n := range nums {
		if *n.dst, err = strconv.Atoi(n.src); err != nil {
			return procStat{}, fmt.Errorf("stat: %w", err)
		}
	}
	s.state = fields[0][0]
	return s, nil
}

// allStats reads /proc/*/stat for every live process. Processes that vanish
// while it reads are skipped.
func allStats() []procStat {
	dirs, _ := os.ReadDir("/proc")
	stats := make([]procStat, 0, len(dirs))
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if s, err := readStat(pid); err == nil {
			stats = append(stats, s)
		}
	}
	return stats
}

// tree returns root and all its live descendants (zombies excluded), root
// first. It returns nil if root is gone.
func tree(root int) []procStat {
	stats := allStats()
	children := map[int][]procStat{}
	var top *procStat
	for i, s := range stats {
		children[s.ppid] = append(children[s.ppid], s)
		if s.pid == root {
			top = &stats[i]
		}
	}
	if top == nil {
		return nil
	}
	out := []procStat{*top}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i].pid] {
			if c.state != 'Z' {
				out = append(out, c)
			}
		}
	}
	return out
}

// groupMembers returns the live (non-zombie) processes in process group pgrp.
func groupMembers(pgrp int) []int {
	var pids []int
	for _, s := range allStats() {
		if s.pgrp == pgrp && s.state != 'Z' {
			pids = append(pids, s.pid)
		}
	}
	return pids
}

// memory is the resident memory of a set of processes, in bytes.
type memory struct {
	rss, pss uint64
}

// processMemory reads VmRSS-equivalent Rss and Pss of pid from
// /proc/PID/smaps_rollup. It returns zero for a process that is gone.
func processMemory(pid int) memory {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return memory{}
	}
	return parseRollup(b)
}

// parseRollup reads the Rss: and Pss: lines (in kB) of a smaps_rollup file.
func parseRollup(b []byte) memory {
	var m memory
	for line := range strings.SplitSeq(string(b), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "Rss":
			m.rss = kb * 1024
		case "Pss":
			m.pss = kb * 1024
		}
	}
	return m
}

// treeMemory sums the memory of root and its descendants and returns it
// with the number of processes counted.
func treeMemory(root int) (memory, int) {
	var total memory
	procs := tree(root)
	for _, p := range procs {
		m := processMemory(p.pid)
		total.rss += m.rss
		total.pss += m.pss
	}
	return total, len(procs)
}

// schedStat is a process's scheduler account, summed over its threads.
type schedStat struct {
	cpu     time.Duration // time on a CPU, in nanoseconds
	runs    uint64        // times a thread was put on a CPU: wake-ups
	threads int           // threads whose account was read
}

// readSched sums /proc/PID/task/TID/schedstat over the threads of pid. It
// is exact to the nanosecond, unlike the 10 ms ticks of /proc/PID/stat,
// but forgets threads that have exited (the servers measured here keep
// theirs). It returns the zero value if the process is gone.
func readSched(pid int) schedStat {
	paths, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	var total schedStat
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b))
		if len(fields) < 3 {
			continue
		}
		ns, _ := strconv.ParseUint(fields[0], 10, 64)
		runs, _ := strconv.ParseUint(fields[2], 10, 64)
		total.cpu += time.Duration(ns)
		total.runs += runs
		total.threads++
	}
	return total
}

// passiveOpens returns the kernel's count of accepted TCP connections
// (TcpPassiveOpens in /proc/net/snmp), or an error if it cannot be read.
func passiveOpens() (uint64, error) {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0, err
	}
	return parseSnmp(b, "Tcp", "PassiveOpens")
}

// parseSnmp finds counter name of protocol proto in /proc/net/snmp text,
// whose lines come in pairs: names, then values. It returns an error if the
// counter is missing.
func parseSnmp(b []byte, proto, name string) (uint64, error) {
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != proto+":" || len(values) != len(names) || values[0] != proto+":" {
			continue
		}
		for j, n := range names {
			if n == name {
				return strconv.ParseUint(values[j], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("snmp: no %s %s", proto, name)
}
