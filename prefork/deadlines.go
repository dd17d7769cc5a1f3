package prefork

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// A slot's deadlines: how long a child may take to start, to answer an
// order or a ping, to exit when told, and to serve one connection. due
// decides, from the slot, the time and the limits alone, what one tick owes
// a slot; checkSlot carries that out. The table is docs/architecture.md's
// "deadline (checked each tick)" column.

// deadlineLimits are the durations due enforces, taken from Config once per
// tick (Config.deadlines).
type deadlineLimits struct {
	Start     time.Duration // --start-timeout: hello and ready, from the start
	Ping      time.Duration // --ping-timeout: an answer to a ping or an order
	PingAfter time.Duration // silence after which an idle child is pinged (pingAfter)
	Busy      time.Duration // --busy-timeout, 0 = off
	BusyGrace time.Duration // --busy-kill-grace: SIGQUIT to SIGKILL
	Slow      time.Duration // --slow-request, 0 = off
}

// deadlines returns c's deadline limits for a tick that pings idle children
// silent for after.
func (c Config) deadlines(after time.Duration) deadlineLimits {
	return deadlineLimits{Start: c.StartTimeout, Ping: c.PingTimeout, PingAfter: after,
		Busy: c.BusyTimeout, BusyGrace: c.BusyKillGrace, Slow: c.SlowRequest}
}

// action is what a tick does to a slot whose deadline has come.
type action uint8

const (
	doNothing  action = iota // no deadline has come
	doPing                   // send a ping: the idle child has been silent PingAfter
	doHung                   // kill it as hung (counted in Hung)
	doPingLost               // kill it as hung: its ping went unanswered (also counted in PingsFailed)
	doQuit                   // busy too long: SIGQUIT (counted in Hung), SIGKILL BusyGrace later
	doKill                   // the SIGQUIT's grace is over: SIGKILL
)

// duty is due's answer for one slot.
type duty struct {
	act  action
	why  string // for the kills: the reason logged
	slow bool   // log this busy spell as slow (once per spell)
}

// due returns what a tick at now owes slot s under limits l. It reads no
// clock and changes nothing:
//   - doNothing for a killed slot, and for one whose deadlines are ahead;
//   - doHung for a draining child past its deadline, one that has not said
//     hello and become ready within Start of its start (one Start for both,
//     not one each), or one that has not answered an order within Ping;
//   - doPing for an idle (or standby) child silent for PingAfter with no
//     ping outstanding; doPingLost when its ping is older than Ping;
//   - for a busy child, slow set once per busy spell past Slow, and doQuit
//     past Busy, then doKill once BusyGrace has passed since the SIGQUIT.
func due(s *slot, now time.Time, l deadlineLimits) duty {
	age := now.Sub(s.since)
	switch {
	case s.fate == killed:
		return duty{}
	case !s.deadline.IsZero() && now.After(s.deadline):
		return duty{act: doHung, why: "did not exit when told"}
	case s.state == starting && now.Sub(s.started) > l.Start:
		return duty{act: doHung, why: fmt.Sprintf("no hello within %v", l.Start)}
	case s.state == greeted && now.Sub(s.started) > l.Start:
		return duty{act: doHung, why: fmt.Sprintf("hello but not ready within %v", l.Start)}
	case s.state == ordered || s.state == moving:
		if age > l.Ping {
			return duty{act: doHung, why: fmt.Sprintf("no answer to an accept order within %v", l.Ping)}
		}
	case s.state == busy || s.state == movingBusy:
		return dueBusy(s, now, l)
	case s.state == idle || s.state == standby:
		return duePing(s, now, l)
	}
	return duty{}
}

// duePing returns doPingLost when s's ping has gone unanswered for Ping,
// doNothing while it is outstanding or s was heard within PingAfter, and
// doPing otherwise.
func duePing(s *slot, now time.Time, l deadlineLimits) duty {
	switch {
	case !s.pingSentAt.IsZero() && now.Sub(s.pingSentAt) > l.Ping:
		return duty{act: doPingLost, why: fmt.Sprintf("no answer to ping within %v", l.Ping)}
	case !s.pingSentAt.IsZero() || now.Sub(s.heard) < l.PingAfter:
		return duty{}
	}
	return duty{act: doPing}
}

// dueBusy returns, for a busy s, slow when its spell passed Slow and was not
// logged yet, with doNothing while Busy is off or not passed, doQuit when no
// SIGQUIT was sent yet, and doKill once BusyGrace has passed since it was.
func dueBusy(s *slot, now time.Time, l deadlineLimits) duty {
	busyFor := now.Sub(s.since)
	d := duty{slow: l.Slow > 0 && busyFor > l.Slow && !s.slowAt.Equal(s.since)}
	switch {
	case l.Busy <= 0 || busyFor <= l.Busy:
	case s.quitAt.IsZero():
		d.act = doQuit
	case now.Sub(s.quitAt) > l.BusyGrace:
		d.act, d.why = doKill, fmt.Sprintf("busy for more than %v", l.Busy)
	}
	return d
}

// checkSlot carries out what due says a tick owes slot s, then ends the
// start-failure streak once a current child has proved it stays up.
func (p *Pool) checkSlot(s *slot, l deadlineLimits) {
	if s.fate == killed {
		return
	}
	d := due(s, p.now, l)
	if d.slow {
		p.logSlow(s)
	}
	switch d.act {
	case doPing:
		p.ping(s)
	case doPingLost:
		p.stats.PingsFailed++
		p.stats.pingFails++
		p.hung(s, d.why)
	case doHung:
		p.hung(s, d.why)
	case doQuit:
		p.quit(s)
	case doKill:
		p.kill(s, "hung", d.why)
	}
	if s.gen == p.gens.cur && !s.state.starting() && p.backoff.proves(s.started, p.now) {
		p.backoff.ok() // the worker starts and stays up: the failure streak is over
	}
}

// hung kills a child that stopped answering.
func (p *Pool) hung(s *slot, why string) {
	p.stats.Hung++
	p.kill(s, "hung", why)
}

// quit sends SIGQUIT to a child busy past BusyTimeout (a Go child dumps its
// goroutines) and notes when, for the SIGKILL BusyKillGrace later.
func (p *Pool) quit(s *slot) {
	s.quitAt = p.now
	p.stats.Hung++
	p.log.Warn("busy too long: SIGQUIT", "event", "hung", "slot", s.num, "pid", s.pid,
		"busy_for", p.now.Sub(s.since).String(), "request", s.request)
	p.signal(s, unix.SIGQUIT)
}

// logSlow logs, once per busy spell, a child busy for longer than
// SlowRequest (--slow-request), with the request it reported.
func (p *Pool) logSlow(s *slot) {
	s.slowAt = s.since
	p.stats.Slow++
	p.log.Warn("slow request", "event", "slow", "slot", s.num, "pid", s.pid,
		"busy_for", p.now.Sub(s.since).Round(time.Millisecond).String(), "request", s.request)
}
