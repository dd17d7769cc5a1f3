package main

import (
	"net"
	"os/exec"
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

// TestFilterFDBudget: under an accept filter with LimitNOFILE=128, 200
// slow clients (half silent, half with part of a head) do not take the
// master's fds: it holds what its budget allows, sheds the oldest to take
// the next, keeps serving every good client, and is never called stuck
// (under systemd, the watchdog would restart it in a loop).
func TestFilterFDBudget(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not installed (Debian package util-linux)")
	}
	a := startActdUnder(t, []string{prlimit, "--nofile=128:128"}, nil, "--accept-filter", "http",
		"--max-children", "8", "--hold-timeout", "1m")
	var slow []net.Conn
	defer func() {
		for _, c := range slow {
			c.Close()
		}
	}()
	for i := range 200 {
		c, err := net.DialTimeout("unix", a.sock, 5*time.Second)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		if i%2 == 0 {
			c.Write([]byte("GET /slow HTTP/1.1\r\nHost: a\r\n"))
		}
		slow = append(slow, c)
	}
	for i := range 20 {
		if body, err := a.get(); err != nil {
			t.Errorf("good request %d beside 200 slow clients: %q, %v", i, body, err)
		}
	}
	s := a.status(t).Snapshot
	if s.Held == nil || s.Held.Max >= 128 || s.Held.Held > s.Held.Max || s.Stats.Shed == 0 || s.Stats.Stuck {
		t.Errorf("held %+v, shed %d, stuck %v; want at most a budget below the fd limit, some shed, not stuck",
			s.Held, s.Stats.Shed, s.Stats.Stuck)
	}
	if !strings.Contains(a.stderr.String(), "shedding held connections") {
		t.Errorf("no shedding logged:\n%s", a.stderr.String())
	}
}
