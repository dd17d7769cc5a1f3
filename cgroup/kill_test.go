package cgroup

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestKill: whatever is left in a slot's leaf, a process and the
// background jobs it started, is killed; an empty leaf, or one never made,
// is left alone.
func TestKill(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string // run in slot-0's leaf; "" starts nothing
		want   int    // PIDs found in the leaf
	}{
		// exec: a shell whose jobs die first goes on as the same PID, so
		// it still dies by the SIGKILL sent to it, not by its own exit
		{"a process and its jobs", "sleep 60 & sleep 60 & wait; exec sleep 60", 3},
		{"a process that forks on", "i=0; while [ $i -lt 2000 ]; do sleep 60 & i=$((i+1)); done; wait", 1},
		{"empty leaf", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := testTree(t)
			var cmd *exec.Cmd
			if tc.script != "" {
				cmd = startIn(t, tree, 0, tc.script, nil)
				waitFor(t, "the background jobs in the leaf", func() bool { p, _ := procs(tree.leaf(0)); return len(p) >= tc.want })
			} else if err := os.Mkdir(tree.leaf(0), 0o755); err != nil {
				t.Fatal(err)
			}
			pids, err := tree.Kill(0)
			if err != nil || len(pids) < tc.want || tc.want == 0 && pids != nil {
				t.Fatalf("got PIDs %v, %v, want %d or more of them", pids, err, tc.want)
			}
			waitFor(t, "an empty leaf", func() bool { p, _ := procs(tree.leaf(0)); return len(p) == 0 })
			if cmd != nil {
				if err := cmd.Wait(); !killed(err) {
					t.Errorf("the process in the leaf: got %v, want killed by SIGKILL", err)
				}
			}
		})
	}
	t.Run("no leaf", func(t *testing.T) {
		tree := &Tree{dir: t.TempDir()}
		if pids, err := tree.Kill(7); pids != nil || err != nil {
			t.Errorf("got %v, %v, want nil, nil", pids, err)
		}
	})
}

// TestKillLeavesLeafUsable: a process born into a leaf through clone3's
// CLONE_INTO_CGROUP after Kill emptied it runs (the slot's next child).
// Writing cgroup.kill instead fails this on Linux 6.18: the new process is
// SIGKILLed before it runs.
func TestKillLeavesLeafUsable(t *testing.T) {
	tree := testTree(t)
	startIn(t, tree, 0, "sleep 60", nil)
	waitFor(t, "sleep in the leaf", func() bool { p, _ := procs(tree.leaf(0)); return len(p) >= 1 })
	if pids, err := tree.Kill(0); len(pids) == 0 || err != nil {
		t.Fatalf("Kill: got %v, %v, want the PIDs of sh -c sleep", pids, err)
	}
	waitFor(t, "an empty leaf", func() bool { p, _ := procs(tree.leaf(0)); return len(p) == 0 })
	var out bytes.Buffer
	err := startIn(t, tree, 0, "echo started", &out).Wait()
	if out.String() != "started\n" || err != nil {
		t.Errorf("the next process in the leaf: got %q, %v, want it to run", out.String(), err)
	}
}

// testTree returns a Tree on a throwaway group under the cgroup-v2 mount,
// removed with its leaves at the end of the test, or skips the test.
func testTree(t *testing.T) *Tree {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes a cgroup-v2 group")
	}
	m, err := readMounts("/proc/self/mountinfo")
	if err != nil || m.v2 == "" || unix.Access(m.v2, unix.W_OK) != nil {
		t.Skipf("no writable cgroup-v2 hierarchy (%v)", err)
	}
	dir, err := os.MkdirTemp(m.v2, "actd-test-")
	if err != nil {
		t.Skipf("cannot make a cgroup-v2 group: %v", err)
	}
	t.Cleanup(func() {
		leaves, _ := filepath.Glob(filepath.Join(dir, "slot-*"))
		for _, d := range leaves {
			os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0) // what a failed test left
		}
		for _, d := range append(leaves, dir) {
			waitFor(t, "rmdir "+d, func() bool { err := unix.Rmdir(d); return err == nil || errors.Is(err, unix.ENOENT) })
		}
	})
	return &Tree{dir: dir}
}

// startIn starts sh -c script in slot n's leaf of tree, its stdout to out.
func startIn(t *testing.T, tree *Tree, n int, script string, out io.Writer) *exec.Cmd {
	t.Helper()
	fd, err := tree.Leaf(n, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdout = out
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a process in a cgroup (clone3): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// killed reports whether err is a process's exit by SIGKILL.
func killed(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// waitFor polls cond until it holds or 10 seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what)
		}
	}
}
