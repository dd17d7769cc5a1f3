package main

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestGroup: the first member to return stops the others, run waits for
// all of them and returns the first one's error.
func TestGroup(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		first   error // what the member that returns on its own returns
		waiting int   // members that run until interrupted
		want    error
	}{
		{"empty", nil, -1, nil},
		{"alone nil", nil, 0, nil},
		{"alone error", boom, 0, boom},
		{"stops the others, nil", nil, 3, nil},
		{"stops the others, error", boom, 3, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g group
			stopped := make(chan string, 8)
			if tc.waiting >= 0 {
				g.add("first", func() error { return tc.first }, func(error) {})
			}
			for range max(tc.waiting, 0) {
				stop := make(chan struct{})
				g.add("waiting", func() error { <-stop; stopped <- "waiting"; return errors.New("late") },
					func(error) { close(stop) })
			}
			err := g.run()
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if got := len(stopped); got != max(tc.waiting, 0) {
				t.Errorf("got %d members stopped when run returned, want %d", got, max(tc.waiting, 0))
			}
		})
	}
}

// TestGroupJoinedAtExit: after SIGTERM the master exits 0 only once its
// side services have stopped: the control socket file is gone and the
// metrics address can be bound again.
func TestGroupJoinedAtExit(t *testing.T) {
	addr := freeAddr(t)
	a := startActd(t, nil, "--metrics-listen", addr)
	if code, _, err := scrape(addr, "/metrics"); code != 200 {
		t.Fatalf("metrics before the stop: got %d (%v), want 200", code, err)
	}
	a.signal(t, syscall.SIGTERM)
	if code := a.wait(t, 15*time.Second); code != 0 {
		t.Errorf("got exit status %d, want 0", code)
	}
	if _, err := os.Stat(a.ctl); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("control socket after exit: got %v, want it removed", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Errorf("metrics address after exit: %v", err)
	} else {
		ln.Close()
	}
}
