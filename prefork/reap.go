package prefork

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// start spawns a child into the lowest empty slot and watches its pidfd and
// back-channel. A failed spawn (fd exhaustion, a missing program) counts as
// a start failure for the backoff. It reports whether a child started.
func (p *Pool) start() bool {
	num := p.freeSlot()
	if num < 0 {
		p.log.Warn("no free slot", "max", maxSlots)
		return false
	}
	c, err := p.launcher.launch(num)
	if err != nil {
		p.backoff.fail(p.now, err.Error())
		p.log.Error("spawn failed", "event", "spawn", "slot", num, "err", err, "retry_in", p.backoff.delay())
		return false
	}
	p.backoff.spawned(p.now)
	s := &slot{num: num, pid: c.pid, pidfd: c.pidfd, ch: c.ch, gen: p.gens.cur,
		started: p.now, heard: p.now, limit: p.cfg.jitteredLimit()}
	p.slots[num] = s
	p.move(s, evSpawn)
	p.watch(s)
	p.stats.Spawned++
	p.launcher.started(s) // watches its process, logs
	p.changedState()
	return true
}

// freeSlot returns the lowest empty slot number, growing the table, or -1.
func (p *Pool) freeSlot() int {
	for i, s := range p.slots {
		if !s.live() {
			return i
		}
	}
	if len(p.slots) >= maxSlots {
		return -1
	}
	p.slots = append(p.slots, &slot{num: len(p.slots), pidfd: -1, ch: -1})
	return len(p.slots) - 1
}

// watch reads slot s's back-channel; its process is the launcher's to watch.
func (p *Pool) watch(s *slot) {
	if s.ch >= 0 {
		p.reports.starting = true
		if err := p.reports.poll.add(s.ch, eventIn, kindChannel, s.num); err != nil {
			p.log.Error("watch back-channel", "slot", s.num, "err", err)
		}
	}
}

// reap collects slot s's exited child and frees the slot.
func (p *Pool) reap(s *slot) {
	if !s.live() {
		return // a stale event for a slot already freed in this turn
	}
	var ws unix.WaitStatus
	pid, err := unix.Wait4(s.pid, &ws, unix.WNOHANG, nil)
	if pid == 0 || errors.Is(err, unix.EINTR) {
		return
	}
	p.killLeftovers(s) // leftovers.go
	p.readRest(s)
	p.closeChannel(s)
	p.poll.remove(s.pidfd)
	unix.Close(s.pidfd)
	now := p.noteExit(s, ws, err)
	p.free(s)
	if now {
		p.replaceNow()
	}
}

// free empties slot s, whose process is reaped or was never known.
func (p *Pool) free(s *slot) {
	from := s.state
	p.step(s, evReap)
	*s = slot{num: s.num, pidfd: -1, ch: -1}
	p.mode.moved(s, from, empty, evReap)
	p.gens.ready.check(p)
	p.changedState()
}

// readRest reads what an exited child sent last and the master has not
// read yet (a Served count sent just before it exited on a drain), so that
// no connection goes uncounted. A child cannot send more after its exit:
// the loop ends at EOF, or after a bound for a channel shared with another
// process.
func (p *Pool) readRest(s *slot) {
	for range harvestRounds * 8 {
		if s.ch < 0 {
			return
		}
		if !p.readChannel(s) {
			return
		}
	}
}

// noteExit logs a child's end and feeds the backoff. A child that died
// young or before its hello, or that the master killed before it served a
// connection (garbage, no hello, a missed ping), counts as a start failure
// of the current generation's worker. A child killed from outside (an OOM
// kill, oom.go) after it served does not: it reports true, to be replaced
// at once.
func (p *Pool) noteExit(s *slot, ws unix.WaitStatus, err error) bool {
	exit := exitText(ws, err)
	age := p.now.Sub(s.started).Round(time.Millisecond)
	by := p.mem.killedBy(s, ws)
	if by == killedByOOM {
		p.stats.OOMKilled++
	}
	if s.fate == draining || s.fate == killed && s.reason == "stop" {
		if by != notKilled {
			p.mem.logKill(s, by, exit, age)
		}
		p.log.Debug("child exited", "event", "exit", "slot", s.num, "pid", s.pid, "exit", exit)
		return false
	}
	p.stats.Respawned++
	p.scaler.replace++
	if by != notKilled {
		p.mem.logKill(s, by, exit, age)
		if s.served > 0 {
			return true
		}
	}
	switch {
	case s.fate == killed && s.served == 0 && s.gen == p.gens.cur:
		p.backoff.fail(p.now, "killed before serving: "+s.reason)
		p.log.Error("worker failed to start", "event", "crash", "slot", s.num, "pid", s.pid,
			"reason", s.reason, "age", age, "failures", p.backoff.failures, "retry_in", p.backoff.delay())
	case s.fate == killed:
		p.log.Info("killed child reaped", "event", "exit", "slot", s.num, "pid", s.pid, "exit", exit)
	case s.helloAt.IsZero() && s.state != running || age < youngAge:
		p.backoff.fail(p.now, exit)
		p.log.Error("worker died young", "event", "crash", "slot", s.num, "pid", s.pid,
			"exit", exit, "age", age, "failures", p.backoff.failures, "retry_in", p.backoff.delay())
	default:
		p.log.Warn("child died", "event", "crash", "slot", s.num, "pid", s.pid, "exit", exit, "age", age)
	}
	return false
}

// exitText describes a wait status the way a person reads it.
func exitText(ws unix.WaitStatus, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("wait: %v", err)
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		return fmt.Sprintf("signal %v", ws.Signal())
	}
	return fmt.Sprintf("wait status %#x", uint32(ws))
}

// retire tells slot s to finish and exit: a drain order for a child that
// speaks the protocol, SIGTERM for a shared-mode child. attrs are logged
// with the reason.
func (p *Pool) retire(s *slot, why string, attrs ...any) {
	if s.ending() {
		return
	}
	p.idle.remove(s.num)
	s.fate, s.reason = draining, why
	if !s.state.working() {
		s.deadline = p.now.Add(p.cfg.PingTimeout)
	}
	p.mode.drain(s)
	if why != "stop" {
		event := "retire"
		if why == "recycled" || why == "memory" {
			event = "recycled"
		}
		p.log.Info("retiring child", append([]any{"event", event, "slot", s.num, "pid", s.pid, "reason", why}, attrs...)...)
	}
	p.changedState()
}

// kill ends slot s's child with SIGKILL and stops listening to it: whatever
// it still sends is ignored. reap frees the slot. event names the log event:
// hung, garbage, killed, or stop (not logged).
func (p *Pool) kill(s *slot, event, why string) {
	if s.fate == killed || !s.live() {
		return
	}
	s.fate, s.reason = killed, why
	p.signal(s, unix.SIGKILL)
	p.closeChannel(s)
	if event != "stop" {
		p.log.Warn("killing child, a new one replaces it", "event", event, "slot", s.num, "pid", s.pid, "reason", why)
	}
	p.changedState()
}

// signal sends sig through the pidfd, so a recycled PID is never hit.
func (p *Pool) signal(s *slot, sig unix.Signal) {
	if s.pidfd < 0 {
		return // no process known yet (launcher.go): closing its channel ends it
	}
	if err := unix.PidfdSendSignal(s.pidfd, sig, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		p.log.Error("signal child", "slot", s.num, "pid", s.pid, "signal", sig, "err", err)
	}
}

// liveCount returns the number of children not yet reaped.
func (p *Pool) liveCount() int {
	n := 0
	for _, s := range p.slots {
		if s.live() {
			n++
		}
	}
	return n
}
