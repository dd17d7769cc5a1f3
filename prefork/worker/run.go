package worker

import (
	"errors"
	"time"

	"github.com/actd/actd/protocol"
)

// batchTime bounds a run, with KeepAcceptingBatch: a drain or a
// ping waits no longer than that, plus the connection in hand, even when
// connections are slow.
const batchTime = 50 * time.Millisecond

// run is a series of connections a child accepts one after another without
// reading its back-channel: a dispatch-mode KeepAccepting batch, or an
// exclusive-mode child that finds the queue non-empty after a connection
// (a saturated pool) and skips its epoll_wait.
type run struct {
	begin  time.Time // of the run's first accept
	served int       // connections the run has served already
	idle   bool      // report a long connection's end with Idle (exclusive mode)
	again  *retry    // if set, whether to try at all after the first connection
	screen *screener // if set, each connection is looked at first, and served by it (screen.go)
	env    Env       // the child's: which peers owe a PROXY header (proxy.go)
}

// serve accepts and serves connections from listener l, reported through
// report, until an accept finds none, or the run holds
// KeepAcceptingBatch connections, or batchTime has passed since
// begin. It returns the error of a report.
func (r run) serve(env Env, report *lateBusy, h connServer, l int, p *pause) error {
	r.env = env
	for i := r.served; i < protocol.KeepAcceptingBatch; i++ {
		if i > 0 && (time.Since(r.begin) >= batchTime || r.again != nil && !r.again.due()) {
			return nil
		}
		c, err := acceptOne(env.Listeners[l])
		if err != nil {
			p.wait()
			return nil
		}
		p.reset()
		if i > 0 && r.again != nil {
			r.again.record(c >= 0)
		}
		if c < 0 {
			return nil // a spurious wakeup, or an empty queue after a try
		}
		if err := r.take(report, h, c, l); err != nil {
			return err
		}
	}
	return nil
}

// take serves connection c, accepted on listener l, reported through
// report. A screening child looks at it first: one not ready, or gone, is
// not the child's to serve or report.
func (r run) take(report *lateBusy, h connServer, c, l int) error {
	if r.screen != nil {
		if ready, err := r.screen.look(c, l); !ready || err != nil {
			return err
		}
	}
	report.start(l)
	var err error
	switch {
	case r.screen != nil:
		err = r.screen.serve(c, l)
	case r.env.admit(c, l): // proxy.go: its PROXY header first, if it owes one
		h(c, l)
	}
	return errors.Join(err, report.done(r.idle))
}
