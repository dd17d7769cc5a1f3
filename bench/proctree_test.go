package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestTree starts a shell with a child of its own and finds both below it.
func TestTree(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var procs []procStat
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if procs = tree(cmd.Process.Pid); len(procs) == 2 {
			break
		}
	}
	if len(procs) != 2 {
		t.Fatalf("got %d processes in the tree, want 2 (sh and sleep)", len(procs))
	}
	if procs[0].pid != cmd.Process.Pid || procs[1].ppid != cmd.Process.Pid {
		t.Errorf("got %+v, want sh first and sleep as its child", procs)
	}
	if got := directChildren(procs); got != 1 {
		t.Errorf("directChildren: got %d, want 1", got)
	}
	mem, n := treeMemory(cmd.Process.Pid)
	if n != 2 || mem.rss == 0 || mem.pss == 0 {
		t.Errorf("treeMemory: got %+v over %d processes, want non-zero over 2", mem, n)
	}
	if tree(1<<22+7) != nil {
		t.Error("tree of a PID that does not exist: got processes, want nil")
	}
}

func TestReadStatSelf(t *testing.T) {
	s, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.pid != os.Getpid() || s.ppid != os.Getppid() {
		t.Errorf("got pid %d ppid %d, want %d %d", s.pid, s.ppid, os.Getpid(), os.Getppid())
	}
}

func TestReadSched(t *testing.T) {
	for i := 0; i < 1e6; i++ { // spend a little CPU
		_ = os.Getpid()
	}
	s := readSched(os.Getpid())
	if s.cpu <= 0 || s.runs == 0 {
		t.Errorf("got %+v for this process, want CPU time and runs above zero", s)
	}
	if got := readSched(1<<22 + 7); got != (schedStat{}) {
		t.Errorf("process that does not exist: got %+v, want zero", got)
	}
}

func TestReadSchedThreads(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if got := readSched(cmd.Process.Pid).threads; got != 1 {
		t.Errorf("sleep(1): got %d threads, want 1", got)
	}
	if got, want := readSched(os.Getpid()).threads, 2; got < want {
		t.Errorf("this Go process: got %d threads, want at least %d", got, want)
	}
}
