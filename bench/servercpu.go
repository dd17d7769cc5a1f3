package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// A server's CPU time, master and children, read around a run: from a
// cgroup of its own (cgroupcpu.go) where one can be made, else from its
// process tree (treecpu.go). Issue 24's comparison and the load matrix
// (issue 20's section) read it to report server CPU per request.

// groupRemoveBound bounds how long a stopped server's cgroup may take to
// empty before it is left behind.
const groupRemoveBound = 5 * time.Second

// cpuServer is one running server and where its CPU time is read: its
// own cgroup, or, without one, its process tree.
type cpuServer struct {
	*serverProc
	group    *cpuGroup // nil: the tree is read
	groupErr error     // why it has no group
}

// readCgroupMounts returns the cgroup mounts of /proc/self/mountinfo,
// none if it cannot be read (every server's tree is read then).
func readCgroupMounts() cgroupMounts {
	info, _ := os.ReadFile("/proc/self/mountinfo")
	return parseCgroupMounts(info)
}

// startCPUServer starts server name for s in a cgroup of its own made in
// mounts, or without one (its tree is read then) if none can be made. It
// returns the running server, or startServer's error (its group
// removed).
func startCPUServer(name string, t *tools, s setup, mounts cgroupMounts) (*cpuServer, error) {
	g, groupErr := newCPUGroup(mounts, name)
	p, err := startServerIn(name, t, s, g)
	if err != nil {
		if g != nil {
			err = errors.Join(err, g.remove(groupRemoveBound))
		}
		return nil, err
	}
	return &cpuServer{serverProc: p, group: g, groupErr: groupErr}, nil
}

// stop stops the server, then removes its group. It returns the
// server's stop error (serverProc.stop); a group left behind is said on
// stderr.
func (s *cpuServer) stop() error {
	err := s.serverProc.stop()
	s.removeGroup()
	return err
}

// removeGroup removes the server's group once its processes are gone,
// saying so on stderr if it cannot.
func (s *cpuServer) removeGroup() {
	if s.group == nil {
		return
	}
	if err := s.group.remove(groupRemoveBound); err != nil {
		fmt.Fprintf(os.Stderr, "  %s: %v\n", s.name, err)
	}
	s.group = nil
}

// cpuReading is one reading of a server's CPU time, from its group or
// its tree.
type cpuReading struct {
	group    time.Duration // the group's usage
	groupErr error         // why the group could not be read
	tree     treeTimes     // without a group
}

// cpuNow reads the server's CPU time.
func (s *cpuServer) cpuNow() cpuReading {
	if s.group == nil {
		return cpuReading{tree: readTreeTimes(s.pid())}
	}
	used, err := s.group.usage()
	return cpuReading{group: used, groupErr: err}
}

// cpuSince returns the CPU time the server used since before, and false
// if a reading failed or went backwards (a tree whose process left it
// before being reaped).
func (s *cpuServer) cpuSince(before cpuReading) (time.Duration, bool) {
	after := s.cpuNow()
	if s.group == nil {
		return cpuBetween(before.tree, after.tree)
	}
	if before.groupErr != nil || after.groupErr != nil || after.group < before.group {
		return 0, false
	}
	return after.group - before.group, true
}

// cpuAround reads the server's CPU time before and after run. It returns
// the time used meanwhile, and false as cpuSince does.
func (s *cpuServer) cpuAround(run func()) (time.Duration, bool) {
	before := s.cpuNow()
	run()
	return s.cpuSince(before)
}

// cpuSource says where one server's CPU time was read: its group's how,
// or its tree and why it had no group.
type cpuSource struct {
	server string
	how    string // the group's how(); "" when the tree was read
	err    error  // why there was no group
}

// sourceOf is where the CPU time of server, running as s, is read.
func sourceOf(server string, s *cpuServer) cpuSource {
	if s.group != nil {
		return cpuSource{server: server, how: s.group.how()}
	}
	return cpuSource{server: server, err: s.groupErr}
}

// cpuFrom says where the servers' CPU time was read, for a section:
// their cgroups', and those read from their trees instead, with why
// (each server named once, in the order of sources).
func cpuFrom(sources []cpuSource) string {
	var hows, trees []string
	named := map[string]bool{}
	for _, s := range sources {
		switch {
		case s.how != "":
			hows = append(hows, s.how)
		case !named[s.server]:
			named[s.server] = true
			trees = append(trees, fmt.Sprintf("%s (%v)", s.server, s.err))
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
