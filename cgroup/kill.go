package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// killRounds bounds the passes of signalEach over a leaf whose processes
// fork while they are signalled.
const killRounds = 8

// killSettle is how long signalEach waits, once a pass finds nothing new,
// before it reads the leaf once more: a fork that was under way when its
// parent was signalled attaches its child to the leaf after the read
// that found nothing (TestKill's forking shell left one in CI).
const killSettle = 5 * time.Millisecond

// Kill sends SIGKILL to every process left in slot n's leaf, once its child
// has exited: the descendants it started (a job in the background, a
// daemon it spawned, a grandchild that inherited a listener), which would
// otherwise outlive it and keep its fds. It signals each PID of the leaf's
// cgroup.procs through a pidfd (signalEach). It returns the PIDs it found
// in the leaf (nil: it was empty, or never made), and an error naming the
// file it could not read or the processes it could not kill; those it
// signalled are dying, not yet gone, when it returns.
//
// It does not write the leaf's cgroup.kill (Linux 5.14): on Linux 6.18
// (TestKillLeavesLeafUsable) a group killed that way SIGKILLs every process
// born into it later through clone3's CLONE_INTO_CGROUP, which is how the
// slot's next child starts.
func (t *Tree) Kill(n int) ([]int, error) {
	dir := t.leaf(n)
	pids, err := procs(dir)
	if err != nil || len(pids) == 0 {
		return nil, err
	}
	return pids, signalEach(dir, pids)
}

// leaf returns the directory of slot n's leaf.
func (t *Tree) leaf(n int) string { return filepath.Join(t.dir, "slot-"+strconv.Itoa(n)) }

// signalEach sends SIGKILL to each process in group dir, starting from
// pids (read from its cgroup.procs), then to those it lists after that and
// were not signalled yet (forked meanwhile), until it lists none of those
// or killRounds passes are done; a pass that finds none is read again
// after killSettle. A PID is signalled through a pidfd opened
// before the group is read again, and only if the group still lists it, so
// that a PID reused by a process outside the group is never hit. It returns
// an error if cgroup.procs cannot be read, or if processes not signalled
// are left after the last pass.
func signalEach(dir string, pids []int) error {
	signalled := map[int]bool{}
	settled := false
	for range killRounds {
		fds := map[int]int{}
		for _, pid := range pids {
			if fd, err := unix.PidfdOpen(pid, 0); err == nil {
				fds[pid] = fd
			}
		}
		now, err := procs(dir)
		for pid, fd := range fds {
			if err == nil && slices.Contains(now, pid) {
				unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
				signalled[pid] = true
			}
			unix.Close(fd)
		}
		if err != nil {
			return err
		}
		pids = slices.DeleteFunc(now, func(pid int) bool { return signalled[pid] })
		switch {
		case len(pids) > 0:
			settled = false
		case settled:
			return nil // the rest are dying
		default:
			settled = true // read once more, after a fork under way is done
			time.Sleep(killSettle)
		}
	}
	if len(pids) == 0 {
		return nil // the last pass found none new, with no time left to read again
	}
	return fmt.Errorf("cgroup: %s: %d processes left after %d rounds of SIGKILL", dir, len(pids), killRounds)
}

// procs returns the PIDs group dir's cgroup.procs lists; none, without an
// error, when the group does not exist.
func procs(dir string) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
