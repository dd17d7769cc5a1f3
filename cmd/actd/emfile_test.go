package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMasterOutOfFDs: a master that runs out of file descriptors cannot
// start more children; it says so, backs off, and the children it has keep
// serving every connection.
func TestMasterOutOfFDs(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not installed (Debian package util-linux)")
	}
	dir := t.TempDir()
	a := &actd{dir: dir, sock: filepath.Join(dir, "s"), ctl: filepath.Join(dir, "ctl"), stderr: &syncBuffer{}}
	a.cmd = exec.Command(prlimit, "--nofile=24:24", os.Args[0], "--listen", "unix:"+a.sock,
		"--control-socket", a.ctl, "--log-format", "text", "--start-children", "2",
		"--min-spare", "2", "--max-spare", "32", "--handler-delay", "200ms")
	a.cmd.Env = append(os.Environ(), envAsActd+"=1")
	a.cmd.Stderr = a.stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.cmd.Process.Kill()
		a.cmd.Wait()
		if t.Failed() {
			t.Logf("actd stderr:\n%s", a.stderr)
		}
	})
	waitFor(t, "control socket", 10*time.Second, func() bool { _, err := os.Stat(a.ctl); return err == nil })
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 { // more than the fds allow children for: the pool wants to grow
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.get(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("request: %v", err)
	}
	s := a.status(t).Snapshot
	if s.Stats.Served != 40 {
		t.Errorf("served %d, want 40", s.Stats.Served)
	}
	if !strings.Contains(a.stderr.String(), "too many open files") {
		t.Errorf("no spawn failure logged; the test did not exhaust fds (children: %d)", s.Children)
	}
}
