package prefork

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestInbox: a call made from another goroutine runs when the loop runs
// the inbox, after the eventfd woke it; one made after the pool stopped
// returns ErrStopped; one whose context ends first returns its error.
func TestInbox(t *testing.T) {
	done := make(chan struct{})
	in := newInbox(done)
	wake, err := in.openWake()
	if err != nil {
		t.Fatal(err)
	}
	defer in.closeWake()
	ran := make(chan error, 1)
	x := 0
	go func() { ran <- in.call(context.Background(), func() { x = 1 }) }()
	fds := []unix.PollFd{{Fd: int32(wake), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 10_000); n != 1 || err != nil {
		t.Fatalf("poll of the eventfd: got %d, %v, want 1, nil", n, err)
	}
	in.run()
	if err := <-ran; err != nil || x != 1 {
		t.Errorf("call: got %v with x=%d, want nil with x=1", err, x)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := in.call(ctx, func() {}); !errors.Is(err, context.Canceled) {
		t.Errorf("call with a done context: got %v, want %v", err, context.Canceled)
	}
	close(done)
	if err := in.call(context.Background(), func() {}); !errors.Is(err, ErrStopped) {
		t.Errorf("call after Run: got %v, want %v", err, ErrStopped)
	}
	in.run() // the calls given up on still run, harmlessly
}
