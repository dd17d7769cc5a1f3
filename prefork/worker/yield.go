package worker

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A child's goroutine serves connection after connection, and request
// after request, in system calls that block (epoll_wait, read, ppoll),
// and may never block in Go's scheduler. The runtime's monitor thread
// (sysmon) preempts a goroutine that has run 10 ms without being
// scheduled; if it sits in a system call then, sysmon takes its P away.
// When the call returns, the goroutine goes on with another P, again
// without being scheduled, so sysmon takes that one at its next look, 20 µs
// later, and so on: every system call then costs futex wake-ups and thread
// switches. Measured on a child serving keep-alive requests (worker.Serve,
// 8 connections): 1.66 futex calls, 0.75 nanosleep and 2.9 context
// switches per request, against 0.13, 0.08 and 1.25 when it yields every
// yieldEvery (docs/go.md, "The Go scheduler and blocking system calls").
// Passing through the scheduler (runtime.Gosched) that often ends it, for
// a clock read per wait and a wake-up of an idle thread per yield.

// yieldEvery is how long the serving goroutine goes at most, while it
// serves, without passing through the scheduler: half of the runtime's
// 10 ms.
const yieldEvery = 5 * time.Millisecond

// yields is the child's yielder: it serves one connection at a time.
var yields = newYielder(runtime.Gosched)

// yielder yields after a blocking wait (the start of a connection, a conn's
// wait in ppoll) when yieldEvery has passed since it last did. It may be
// used from several goroutines (a conn's Read and Write): a yield more
// costs nothing but the yield.
type yielder struct {
	now   func() time.Duration // a monotonic clock
	yield func()
	last  atomic.Int64 // now() at the last yield
}

// newYielder returns a yielder that calls yield, on the monotonic clock.
func newYielder(yield func()) *yielder {
	start := time.Now()
	return &yielder{now: func() time.Duration { return time.Since(start) }, yield: yield}
}

// due yields if yieldEvery has passed since the last yield.
func (y *yielder) due() {
	now := int64(y.now())
	if now-y.last.Load() < int64(yieldEvery) {
		return
	}
	y.last.Store(now)
	y.yield()
}

// Yield passes the calling goroutine through Go's scheduler if 5 ms have
// passed since the library last did so (Serve and Listener do it for their
// connections, and every Serve function before each connection). A
// ServeFD or ServeKeepFD handler that serves a long keep-alive connection
// in its own loop of blocking system calls calls it between two requests:
// otherwise Go's monitor thread takes its P in each call once it has run
// 10 ms without being scheduled, and every call costs thread wake-ups
// (docs/go.md). It costs a clock read when not due.
func Yield() { yields.due() }

// yielding returns h, which passes through the scheduler when due before it
// serves a connection (the child has just waited for it).
func (h connServer) yielding() connServer {
	return func(fd, l int) {
		yields.due()
		h(fd, l)
	}
}

// yielding returns k, which passes through the scheduler when due before it
// serves a connection handed over; nil for nil.
func (k keepServer) yielding() keepServer {
	if k == nil {
		return nil
	}
	return func(fd int) bool {
		yields.due()
		return k(fd)
	}
}
