package main

import (
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestMasterOutOfFDs: a master that runs out of file descriptors cannot
// start more children; it says so, backs off, and the children it has keep
// serving every connection.
func TestMasterOutOfFDs(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not installed (Debian package util-linux)")
	}
	a := startActdUnder(t, []string{prlimit, "--nofile=24:24"}, nil, "--start-children", "2",
		"--min-spare", "2", "--max-spare", "32", "--handler-delay", "200ms")
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
