package worker

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/actd/actd/prefork"
)

// Exclusive-mode reports, also used for the connections a dispatch-mode
// child accepts under a KeepAccepting order. A connection that runs busyReportAfter is
// reported Busy (then Idle when done): scaling and timeouts see it. Shorter
// ones are counted and reported together in one Served message, after
// servedBatch connections or servedDelay after the last report, whichever
// comes first (an idle child's wait ends then), so a busy child costs the
// master one wakeup per batch instead of two per connection.
const (
	busyReportAfter = 5 * time.Millisecond
	servedBatch     = 32
	servedDelay     = 50 * time.Millisecond
)

// lateBusy makes those reports. One per child, reused: no allocation per
// connection.
type lateBusy struct {
	ch       channel
	listener int
	timer    *time.Timer
	fired    sync.WaitGroup
	err      error         // of the Busy send, read after fired.Wait
	pending  atomic.Uint32 // short connections not reported yet
	flushed  atomic.Int64  // when they were last reported, unix nanoseconds
}

func newLateBusy(ch channel) *lateBusy {
	b := &lateBusy{ch: ch}
	b.timer = time.AfterFunc(time.Hour, b.fire)
	b.timer.Stop()
	b.flushed.Store(time.Now().UnixNano())
	return b
}

// fire reports the connection in hand busy, after the short ones before it
// (the master takes Served from an idle child only).
func (b *lateBusy) fire() {
	defer b.fired.Done()
	if b.err = b.flush(); b.err == nil {
		b.err = b.ch.send(prefork.Busy, b.listener, 0)
	}
}

// start arms the report for a connection on listener.
func (b *lateBusy) start(listener int) {
	b.listener, b.err = listener, nil
	b.fired.Add(1)
	b.timer.Reset(busyReportAfter)
}

// done notes the connection's end: counted as a short one, or, if its Busy
// went out, reported with Idle when idle is set (exclusive mode; under a
// dispatch-mode KeepAccepting order the child stays busy until its batch
// ends).
func (b *lateBusy) done(idle bool) error {
	if b.timer.Stop() {
		b.fired.Done() // fire will not run
		n := b.pending.Add(1)
		if n >= servedBatch || time.Now().UnixNano()-b.flushed.Load() >= int64(servedDelay) {
			return b.flush()
		}
		return nil
	}
	b.fired.Wait()
	if b.err != nil || !idle {
		return b.err
	}
	return b.ch.send(prefork.Idle, 0, 0)
}

// flushIn returns the epoll_wait timeout, in milliseconds, until the
// connections counted so far are due for a report, or -1 with none counted.
func (b *lateBusy) flushIn() int {
	if b.pending.Load() == 0 {
		return -1
	}
	left := int64(servedDelay) - (time.Now().UnixNano() - b.flushed.Load())
	return int(max(0, (left+int64(time.Millisecond)-1)/int64(time.Millisecond)))
}

// flush reports the short connections counted so far, if any, in one
// Served message whose value is their number.
func (b *lateBusy) flush() error {
	b.flushed.Store(time.Now().UnixNano())
	n := b.pending.Swap(0)
	if n == 0 {
		return nil
	}
	return b.ch.send(prefork.Served, b.listener, n)
}
