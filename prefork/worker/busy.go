package worker

import (
	"sync"
	"time"

	"github.com/actd/actd/prefork"
)

// busyReportAfter is how long a connection runs, in exclusive mode, before
// the child reports it busy. Most connections are done sooner, and then one
// Served message replaces Busy and Idle: half the master's wakeups. Scaling
// and timeouts work in seconds, so a few milliseconds of delay cost nothing.
const busyReportAfter = 5 * time.Millisecond

// lateBusy sends Busy for the connection in hand once it has run for
// busyReportAfter. One per child, reused: no allocation per connection.
type lateBusy struct {
	ch       channel
	listener int
	timer    *time.Timer
	fired    sync.WaitGroup
	err      error // of the Busy send, read after fired.Wait
}

func newLateBusy(ch channel) *lateBusy {
	b := &lateBusy{ch: ch}
	b.timer = time.AfterFunc(time.Hour, b.fire)
	b.timer.Stop()
	return b
}

func (b *lateBusy) fire() {
	defer b.fired.Done()
	b.err = b.ch.send(prefork.Busy, b.listener, 0)
}

// start arms the report for a connection on listener.
func (b *lateBusy) start(listener int) {
	b.listener, b.err = listener, nil
	b.fired.Add(1)
	b.timer.Reset(busyReportAfter)
}

// done reports the connection's end: Served if Busy was never sent, else
// Idle after the Busy went out.
func (b *lateBusy) done() error {
	if b.timer.Stop() {
		b.fired.Done() // fire will not run
		return b.ch.send(prefork.Served, b.listener, 0)
	}
	b.fired.Wait()
	if b.err != nil {
		return b.err
	}
	return b.ch.send(prefork.Idle, 0, 0)
}
