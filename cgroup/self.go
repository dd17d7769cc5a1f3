package cgroup

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Groups are the directories of one process's control groups that matter to
// the pool, each "" when that hierarchy is not mounted or not visible.
type Groups struct {
	V2       string // its group on the unified hierarchy
	V1Memory string // its group on a v1 memory hierarchy (hybrid hosts)
}

// Self returns the calling process's groups, read from /proc/self/cgroup and
// /proc/self/mountinfo. It returns an error only if those cannot be read; a
// hierarchy that is not mounted leaves its field "".
func Self() (Groups, error) {
	mounts, err := readMounts("/proc/self/mountinfo")
	if err != nil {
		return Groups{}, err
	}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return Groups{}, fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	var g Groups
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "" && mounts.v2 != "":
			g.V2 = filepath.Join(mounts.v2, parts[2])
		case hasWord(parts[1], ",", "memory") && mounts.v1Memory != "":
			g.V1Memory = filepath.Join(mounts.v1Memory, parts[2])
		}
	}
	if err := sc.Err(); err != nil {
		return Groups{}, fmt.Errorf("cgroup: %w", err)
	}
	return g, nil
}

// mounts are where the hierarchies are mounted.
type mounts struct{ v2, v1Memory string }

// readMounts finds the cgroup2 mount and the v1 memory mount in a
// mountinfo file: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE SUPEROPTS".
func readMounts(path string) (mounts, error) {
	f, err := os.Open(path)
	if err != nil {
		return mounts{}, fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	var m mounts
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		before, after, ok := strings.Cut(sc.Text(), " - ")
		fields, fs := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(fs) < 3 {
			continue
		}
		switch {
		case fs[0] == "cgroup2" && m.v2 == "":
			m.v2 = unescape(fields[4])
		case fs[0] == "cgroup" && hasWord(fs[2], ",", "memory") && m.v1Memory == "":
			m.v1Memory = unescape(fields[4])
		}
	}
	if err := sc.Err(); err != nil {
		return mounts{}, fmt.Errorf("cgroup: %w", err)
	}
	return m, nil
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescape(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// hasWord reports whether list, split at sep, contains w.
func hasWord(list, sep, w string) bool {
	for _, x := range strings.Split(list, sep) {
		if x == w {
			return true
		}
	}
	return false
}
