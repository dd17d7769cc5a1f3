package prefork

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/actd/actd/internal/fdwait"
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
	if ok, err := fdwait.Readable(wake, 10*time.Second); !ok || err != nil {
		t.Fatalf("poll of the eventfd: got readable %v, %v, want true, nil", ok, err)
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
