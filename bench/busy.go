package main

import (
	"os"
	"strconv"
	"strings"
)

// busyChildren counts the direct children of procs[0] that hold an open
// file on one of the accepted connections in inodes: the busy processes of
// a prefork pool. Each process is read at its own moment, so the count can
// lag by a connection, but unlike a count of sockets it never exceeds the
// pool.
func busyChildren(procs []procStat, inodes map[uint64]struct{}) int {
	n := 0
	for _, p := range procs[1:] {
		if p.ppid == procs[0].pid && holdsSocket(p.pid, inodes) {
			n++
		}
	}
	return n
}

// holdsSocket reports whether process pid has a file descriptor on one of
// the sockets in inodes. A process that is gone holds none.
func holdsSocket(pid int, inodes map[uint64]struct{}) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		target, err := os.Readlink(dir + e.Name())
		if err != nil {
			continue
		}
		rest, ok := strings.CutPrefix(target, "socket:[")
		if !ok {
			continue
		}
		inode, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
		if _, held := inodes[inode]; err == nil && held {
			return true
		}
	}
	return false
}
