package worker

import (
	"sync"
	"time"

	"github.com/actd/actd/protocol"
)

// Exclusive-mode reports, also used for the connections a dispatch-mode
// child accepts under a KeepAccepting order. A connection that runs
// busyReportAfter is reported Busy (then Idle when done): scaling and
// timeouts see it. Shorter ones are counted and reported together in one
// Served message, after servedBatch connections or servedDelay after the last
// report, whichever comes first (an idle child's wait ends then), so a busy
// child costs the master one wakeup per batch instead of two per connection.
//
// While connections follow one another, a connection's age is checked at
// most every busyRecheck: each check wakes a runtime thread, which at one
// per busyReportAfter cost 8% of the throughput under a saturating load of
// short connections. A long connection that starts in such a stream is so
// reported Busy between busyReportAfter and busyRecheck after its start; one
// that starts after the child was idle, at busyReportAfter.
const (
	busyReportAfter = 5 * time.Millisecond
	busyRecheck     = 50 * time.Millisecond
	servedBatch     = 32
	servedDelay     = 50 * time.Millisecond
)

// lateBusy makes those reports. One per child, reused: no allocation per
// connection. Its timer is not set and stopped per connection (each of
// which could wake a runtime thread): once set, it stays set while
// connections follow one another, and lapses when it finds the child idle.
type lateBusy struct {
	ch    channel
	timer *time.Timer
	base  time.Time // times below are durations since base (monotonic)

	mu       sync.Mutex // the fields below; held while fire sends
	armed    bool       // the timer is set
	active   bool       // a connection is in hand
	started  time.Duration
	listener int
	reported bool  // the connection in hand was reported Busy
	err      error // of a send by fire, returned by done
	pending  uint32
	flushed  time.Duration // when short connections were last reported
	request  requestReport // the request in hand (request.go)
}

func newLateBusy(ch channel) *lateBusy {
	b := &lateBusy{ch: ch, base: time.Now()}
	b.timer = time.AfterFunc(time.Hour, b.fire)
	b.timer.Stop()
	b.request.allowed = requestsAllowed()
	current.Store(b)
	startTally(ch) // tally.go
	return b
}

func (b *lateBusy) now() time.Duration { return time.Since(b.base) }

// fire reports the connection in hand busy, after the short ones before it
// (the master takes Served from an idle child only), once it has run
// busyReportAfter; for a younger one it sets the timer again. Then it
// reports the request in hand, if due (requestDue).
func (b *lateBusy) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	if !b.active {
		return
	}
	if !b.reported {
		if age := b.now() - b.started; age < busyReportAfter {
			b.rearm(age)
			return
		}
		b.reported = true
		if b.err = b.flushLocked(); b.err == nil {
			b.err = b.ch.send(protocol.Busy, b.listener, 0)
		}
	}
	b.requestDue()
}

// rearm sets the timer again for a report due busyReportAfter after
// something now age old, or busyRecheck from now if that is later.
func (b *lateBusy) rearm(age time.Duration) {
	b.armed = true
	b.timer.Reset(max(busyReportAfter-age, busyRecheck))
}

// start notes a connection on listener.
func (b *lateBusy) start(listener int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active, b.reported, b.started, b.listener = true, false, b.now(), listener
	b.request.clear()
	if !b.armed {
		b.armed = true
		b.timer.Reset(busyReportAfter)
	}
}

// done notes the connection's end: counted as a short one, or, if its Busy
// went out, reported with Idle when idle is set (exclusive mode; under a
// dispatch-mode KeepAccepting order the child stays busy until its batch
// ends).
func (b *lateBusy) done(idle bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = false
	b.request.clear()
	if b.reported {
		err := b.err
		b.err = nil
		if err != nil || !idle {
			return err
		}
		return b.ch.send(protocol.Idle, 0, 0)
	}
	b.pending++
	if b.pending >= servedBatch || b.now()-b.flushed >= servedDelay {
		return b.flushLocked()
	}
	return nil
}

// flushIn returns the epoll_wait timeout, in milliseconds, until the
// connections counted so far are due for a report, or -1 with none counted.
func (b *lateBusy) flushIn() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == 0 {
		return -1
	}
	left := servedDelay - (b.now() - b.flushed)
	return int(max(0, (left+time.Millisecond-1)/time.Millisecond))
}

// flush reports the short connections counted so far, if any, in one
// Served message whose value is their number.
func (b *lateBusy) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *lateBusy) flushLocked() error {
	b.flushed = b.now()
	n := b.pending
	b.pending = 0
	if n == 0 {
		return nil
	}
	return b.ch.send(protocol.Served, b.listener, n)
}
