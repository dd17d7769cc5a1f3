package prefork

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// inbox is how other goroutines reach the master loop: functions queued
// under a lock, and an eventfd whose readiness (kindWake) makes the loop's
// epoll_wait return to run them. Calls queued before the eventfd is open
// wait for the first wakeUp after open.
type inbox struct {
	mu    sync.Mutex
	calls []func()
	wake  int  // the eventfd, when open
	open  bool // wake is open: wakeUp writes to it
	done  <-chan struct{}
}

// newInbox returns an inbox whose calls give up with ErrStopped once done
// is closed (Run has returned).
func newInbox(done <-chan struct{}) *inbox { return &inbox{done: done} }

// call runs f on the master loop and waits for it. It returns ErrStopped if
// Run has returned (or returns before f runs).
func (p *Pool) call(f func()) error { return p.inbox.call(context.Background(), f) }

// call runs f on the master loop and waits for it, or gives up when ctx is
// done, returning ctx.Err() (f may still run later). It returns ErrStopped
// if Run has returned (or returns before f runs), nil once f ran.
func (in *inbox) call(ctx context.Context, f func()) error {
	ran := make(chan struct{})
	in.mu.Lock()
	in.calls = append(in.calls, func() { f(); close(ran) })
	in.mu.Unlock()
	in.wakeUp()
	select {
	case <-ran:
		return nil
	case <-in.done:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// openWake opens the eventfd and returns it, for the loop to watch. It
// returns eventfd's error.
func (in *inbox) openWake() (int, error) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, fmt.Errorf("eventfd: %w", err)
	}
	in.mu.Lock() // wakeUp reads wake from other goroutines
	in.wake, in.open = wake, true
	in.mu.Unlock()
	return wake, nil
}

// closeWake closes the eventfd: wakeUp does nothing from then on.
func (in *inbox) closeWake() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.open {
		unix.Close(in.wake)
		in.open = false
	}
}

// wakeUp makes the loop's epoll_wait return. Safe from any goroutine.
func (in *inbox) wakeUp() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.open {
		unix.Write(in.wake, one[:])
	}
}

// run runs the queued calls, on the loop.
func (in *inbox) run() {
	var buf [8]byte
	in.mu.Lock()
	if in.open {
		unix.Read(in.wake, buf[:])
	}
	calls := in.calls
	in.calls = nil
	in.mu.Unlock()
	for _, f := range calls {
		f()
	}
}
