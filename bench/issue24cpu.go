package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// groupRemoveBound bounds how long a stopped server's cgroup may take to
// empty before it is left behind.
const groupRemoveBound = 5 * time.Second

// issue24Server is one running server of the comparison and where its
// CPU time is read: its own cgroup (cgroupcpu.go), or, without one, its
// process tree (treecpu.go).
type issue24Server struct {
	*serverProc
	group    *cpuGroup // nil: the tree is read
	groupErr error     // why it has no group
}

// startIssue24Server starts server name for s in a cgroup of its own
// made in mounts, or without one (its tree is read then) if none can be
// made. It returns the running server, or startServer's error (its group
// removed).
func startIssue24Server(name string, t *tools, s setup, mounts cgroupMounts) (*issue24Server, error) {
	g, groupErr := newCPUGroup(mounts, name)
	p, err := startServerIn(name, t, s, g)
	if err != nil {
		if g != nil {
			err = errors.Join(err, g.remove(groupRemoveBound))
		}
		return nil, err
	}
	return &issue24Server{serverProc: p, group: g, groupErr: groupErr}, nil
}

// stop stops the server, then removes its group.
func (s *issue24Server) stop() {
	s.serverProc.stop()
	s.removeGroup()
}

// removeGroup removes the server's group once its processes are gone,
// saying so on stderr if it cannot.
func (s *issue24Server) removeGroup() {
	if s.group == nil {
		return
	}
	if err := s.group.remove(groupRemoveBound); err != nil {
		fmt.Fprintf(os.Stderr, "  %s: %v\n", s.name, err)
	}
	s.group = nil
}

// cpuAround reads the server's CPU time before and after run. It returns
// the time used meanwhile, and false if a reading failed or went
// backwards (a tree whose process left it before being reaped).
func (s *issue24Server) cpuAround(run func()) (time.Duration, bool) {
	if s.group == nil {
		before := readTreeTimes(s.pid())
		run()
		return cpuBetween(before, readTreeTimes(s.pid()))
	}
	before, err := s.group.usage()
	run()
	after, errAfter := s.group.usage()
	if err != nil || errAfter != nil || after < before {
		return 0, false
	}
	return after - before, true
}

// issue24CPUFrom says where the servers' CPU time was read, for the
// section: their cgroups', and those read from their trees instead, with
// why.
func issue24CPUFrom(servers map[string]*issue24Server) string {
	var hows, trees []string
	for _, name := range issue24Servers {
		s := servers[name]
		switch {
		case s == nil:
		case s.group != nil:
			hows = append(hows, s.group.how())
		default:
			trees = append(trees, fmt.Sprintf("%s (%v)", name, s.groupErr))
		}
	}
	slices.Sort(hows)
	hows = slices.Compact(hows)
	tree := "the process tree's `/proc/PID/stat` (utime, stime, cutime, cstime: 10 ms ticks per process and field; a process that leaves the tree is missed)"
	switch {
	case len(hows) == 0 && len(trees) == 0:
		return "nowhere: no server ran"
	case len(hows) == 0:
		return tree + ": no cgroup could be made: " + trees[0]
	case len(trees) == 0:
		return "each server's own cgroup, " + strings.Join(hows, " and ") + ", which every process it starts joins"
	}
	return "each server's own cgroup, " + strings.Join(hows, " and ") + ", except " + strings.Join(trees, ", ") + ": " + tree
}
