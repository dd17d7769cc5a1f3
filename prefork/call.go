package prefork

import (
	"context"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// call runs f on the master loop and waits for it. It returns ErrStopped if
// Run has returned (or returns before f runs).
func (p *Pool) call(f func()) error { return p.callCtx(context.Background(), f) }

// callCtx is call that gives up when ctx is done, returning ctx.Err(); f may
// still run later.
func (p *Pool) callCtx(ctx context.Context, f func()) error {
	ran := make(chan struct{})
	p.callMu.Lock()
	p.calls = append(p.calls, func() { f(); close(ran) })
	p.callMu.Unlock()
	p.wakeUp()
	select {
	case <-ran:
		return nil
	case <-p.done:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wakeUp makes the loop's epoll_wait return. Safe from any goroutine.
func (p *Pool) wakeUp() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	p.callMu.Lock()
	defer p.callMu.Unlock()
	if p.wake >= 0 {
		unix.Write(p.wake, one[:])
	}
}

// runCalls runs the queued calls on the loop.
func (p *Pool) runCalls() {
	var buf [8]byte
	unix.Read(p.wake, buf[:])
	p.callMu.Lock()
	calls := p.calls
	p.calls = nil
	p.callMu.Unlock()
	for _, f := range calls {
		f()
	}
}
