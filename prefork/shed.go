package prefork

import (
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"golang.org/x/sys/unix"
)

// Held connections that are not ready end in one of two ways: their
// --hold-timeout passes (expire), or the master needs the room (shed):
// its hold limit, --max-held or the fd budget (budget.go), is reached, or
// accept fails for want of fds. Either way the connection is ended as a
// server times out a client: with the http filter 408 if part of a
// request came, quietly if nothing did or it was parked.

// room reports whether one more connection may be held, after shedding one
// if the budget is reached.
func (x *handoffMode) room() bool {
	return x.hold.count+x.out.fds() < x.limit() || x.shed("max-held")
}

// expire closes the connections held longer than HoldTimeout without
// becoming ready: with the http filter, those that sent part of a request
// get 408 first; silent and parked ones are closed quietly. One whose head
// is in and whose body came to a stop for HoldTimeout goes to a child.
func (x *handoffMode) expire() {
	p := x.p
	for {
		i := x.hold.expired(p.now.Add(-p.cfg.HoldTimeout))
		if i < 0 {
			return
		}
		if x.hold.conns[i].body != nil { // its body stalled: a child waits on it, as without the holder
			x.hold.bodies.stalled++
			x.hold.dropBody(&x.hold.conns[i])
			x.hold.markReady(i)
			x.handOff()
			continue
		}
		p.stats.HoldTimeouts++
		x.end(i)
	}
}

// end closes held connection i, not ready in time: with the http filter,
// after 408 if part of a request came; silent and parked ones, and those
// on a TLS listener (a plaintext 408 is no answer there), quietly.
func (x *handoffMode) end(i int) {
	c := &x.hold.conns[i]
	if c.header != noHeader {
		x.proxyFailed(i, "not complete within --hold-timeout")
	}
	if x.hold.filter == acceptfilter.HTTP && c.got > 0 && !x.p.spec.tls.onListener(c.listener) {
		x.answer408(c.fd)
		x.p.tallies.answered(408, c.since) // tally.go
	}
	x.close(i)
}

// limit returns the most connections the master holds now (budget.go).
func (x *handoffMode) limit() int {
	n, _ := heldBudget(x.p.cfg, len(x.p.listeners), x.nofile)
	return n
}

// shed makes room for one more connection: it ends the oldest held one
// that is not ready (silent or part of a request first, parked keep-alive
// ones last), as if it had timed out. It reports false if every one held
// is ready. The first shed after a quiet spell is logged, with why.
func (x *handoffMode) shed(why string) bool {
	i := x.hold.shed()
	if i < 0 {
		return false
	}
	p := x.p
	p.stats.Shed++
	x.end(i)
	if p.now.Sub(x.shedLog) >= shedLogEvery {
		x.shedLog = p.now
		p.log.Warn("shedding held connections", "event", "shed", "reason", why, "held", x.hold.count,
			"max_held", x.limit(), "shed", p.stats.Shed)
	}
	return true
}

// shedLogEvery spaces the log lines of a master that sheds all the time.
const shedLogEvery = 10 * time.Second

// answer408 reads and drops what the client sent (so that the close does
// not reset the connection before the answer is read), then writes 408,
// without waiting for either.
func (x *handoffMode) answer408(fd int) {
	for range 4 {
		if n, err := rawSendNow(fd, x.hold.peek, true); err != nil || n < len(x.hold.peek) {
			break
		}
	}
	rawSendNow(fd, response408, false)
	unix.Shutdown(fd, unix.SHUT_WR)
}

var response408 = []byte("HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain\r\nContent-Length: 16\r\n" +
	"Connection: close\r\n\r\nRequest Timeout\n")
