package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The CPU time of a server counted in a cgroup of its own, in
// nanoseconds (cgroup v1's cpuacct.usage) or microseconds (cgroup v2's
// cpu.stat usage_usec): every process the server starts stays in its
// group, whether it exits, is reparented or is never waited for, and the
// kernel counts its run time exactly rather than in /proc/PID/stat's
// 10 ms ticks (treecpu.go, the fallback where no group can be made).

// cgroupMounts are the mount points of the hierarchies that can count
// CPU time, "" where there is none.
type cgroupMounts struct {
	v2      string // the cgroup2 (unified) hierarchy
	cpuacct string // the cgroup v1 hierarchy with the cpuacct controller
}

// parseCgroupMounts finds the cgroup2 mount and the cgroup v1 mount of
// the cpuacct controller in the text of /proc/self/mountinfo. Lines it
// cannot read are skipped.
func parseCgroupMounts(mountinfo []byte) cgroupMounts {
	var m cgroupMounts
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		before, after, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		switch point := fields[4]; {
		case tail[0] == "cgroup2" && m.v2 == "":
			m.v2 = point
		case tail[0] == "cgroup" && m.cpuacct == "" && slices.Contains(strings.Split(tail[2], ","), "cpuacct"):
			m.cpuacct = point
		}
	}
	return m
}

// cpuGroup is a cgroup made for one server, to count its CPU time.
type cpuGroup struct {
	dir string // the group's directory
	v2  bool   // cgroup v2 (cpu.stat), else v1 (cpuacct.usage)
}

// newCPUGroup makes the group name (made unique with the suite's PID)
// in m's cgroup2 hierarchy if its root delegates the cpu controller to
// its children, else in the cpuacct hierarchy. It returns an error
// saying why neither worked.
func newCPUGroup(m cgroupMounts, name string) (*cpuGroup, error) {
	name = fmt.Sprintf("actd-bench-%d-%s", os.Getpid(), name)
	errV2 := errors.New("no cgroup2 mount")
	if m.v2 != "" {
		g := &cpuGroup{dir: filepath.Join(m.v2, name), v2: true}
		if errV2 = g.make(); errV2 == nil {
			return g, nil
		}
	}
	if m.cpuacct == "" {
		return nil, fmt.Errorf("cgroup v2: %w; cgroup v1: no cpuacct mount", errV2)
	}
	g := &cpuGroup{dir: filepath.Join(m.cpuacct, name)}
	if err := g.make(); err != nil {
		return nil, fmt.Errorf("cgroup v2: %w; cgroup v1 cpuacct: %w", errV2, err)
	}
	return g, nil
}

// make creates g's directory. For cgroup v2 it first checks that the
// parent hands the cpu controller to its children. It returns an error
// if it does not or the directory cannot be made.
func (g *cpuGroup) make() error {
	if g.v2 {
		parent := filepath.Dir(g.dir)
		b, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if err != nil {
			return err
		}
		if !slices.Contains(strings.Fields(string(b)), "cpu") {
			return fmt.Errorf("%s gives its children no cpu controller", parent)
		}
	}
	return os.Mkdir(g.dir, 0o755)
}

// how names what the group counts with, for the report.
func (g *cpuGroup) how() string {
	if g.v2 {
		return "cgroup v2 `cpu.stat` usage_usec, in µs"
	}
	return "cgroup v1 `cpuacct.usage`, in ns"
}

// wrap makes cmd start in the group, before it can start any child: it
// runs `sh -c 'echo $$ > PROCS && shift && exec "$@"' sh PROCS PATH
// ARGS...`, so the process keeps its PID (and its process group, and
// any files given to it). It leaves cmd alone if cmd has an error
// (Start reports it).
func (g *cpuGroup) wrap(cmd *exec.Cmd) {
	if cmd.Err != nil {
		return
	}
	procs := filepath.Join(g.dir, "cgroup.procs")
	args := append([]string{"sh", "-c", `echo $$ > "$1" && shift && exec "$@"`, "sh", procs, cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = "/bin/sh", args
}

// usage returns the CPU time the group's processes have used, those that
// left it by exiting included. It returns an error if the file cannot be
// read or parsed.
func (g *cpuGroup) usage() (time.Duration, error) {
	file, parse := "cpuacct.usage", parseCPUAcctUsage
	if g.v2 {
		file, parse = "cpu.stat", parseCPUStatUsage
	}
	b, err := os.ReadFile(filepath.Join(g.dir, file))
	if err != nil {
		return 0, fmt.Errorf("cgroup usage: %w", err)
	}
	return parse(b)
}

// parseCPUAcctUsage reads cgroup v1's cpuacct.usage, a count of
// nanoseconds. It returns an error if the text is not one.
func parseCPUAcctUsage(b []byte) (time.Duration, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 63)
	if err != nil {
		return 0, fmt.Errorf("cpuacct.usage: %w", err)
	}
	return time.Duration(n), nil
}

// parseCPUStatUsage reads the usage_usec line of cgroup v2's cpu.stat.
// It returns an error if there is none or it is not a count.
func parseCPUStatUsage(b []byte) (time.Duration, error) {
	for _, line := range strings.Split(string(b), "\n") {
		key, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		if key != "usage_usec" {
			continue
		}
		n, err := strconv.ParseUint(value, 10, 63)
		if err != nil {
			return 0, fmt.Errorf("cpu.stat usage_usec: %w", err)
		}
		return time.Duration(n) * time.Microsecond, nil
	}
	return 0, errors.New("cpu.stat: no usage_usec")
}

// remove removes the group once its processes are gone, trying until
// within (rmdir fails while any is left). It returns nil once the group
// is gone, or the last rmdir's error.
func (g *cpuGroup) remove(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := os.Remove(g.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
