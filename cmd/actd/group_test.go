package main

import (
	"errors"
	"testing"
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
