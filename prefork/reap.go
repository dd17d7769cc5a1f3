package prefork

import (
	"errors"
	"fmt"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// start spawns a child into the lowest empty slot and watches its pidfd and
// back-channel. A failed spawn (fd exhaustion, a missing program) counts as
// a start failure for the backoff. It reports whether a child started.
func (p *Pool) start() bool {
	num := p.freeSlot()
	if num < 0 {
		p.log.Warn("no free slot", "max", MaxSlots)
		return false
	}
	c, err := p.spawn(num)
	if err != nil {
		p.backoff.fail(p.now, err.Error())
		p.log.Error("spawn failed", "event", "spawn", "slot", num, "err", err, "retry_in", p.backoff.delay())
		return false
	}
	p.backoff.spawned(p.now)
	s := &slot{num: num, pid: c.pid, pidfd: c.pidfd, ch: c.ch, gen: p.gen,
		started: p.now, heard: p.now, limit: p.jitteredLimit()}
	s.setState(starting, p.now)
	if p.cfg.Mode == protocol.Shared {
		s.setState(running, p.now)
	}
	p.slots[num] = s
	p.armCheck = true // exclusive mode: it registers once idle
	p.watch(s)
	p.stats.Spawned++
	p.log.Info("spawned", "event", "spawn", "slot", num, "pid", c.pid, "generation", p.gen)
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
	if len(p.slots) >= MaxSlots {
		return -1
	}
	p.slots = append(p.slots, &slot{num: len(p.slots), pidfd: -1, ch: -1})
	return len(p.slots) - 1
}

func (p *Pool) watch(s *slot) {
	if err := p.poll.add(s.pidfd, eventIn, kindPidfd, s.num); err != nil {
		p.log.Error("watch child", "slot", s.num, "err", err)
	}
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
	p.closeChannel(s)
	p.poll.remove(s.pidfd)
	unix.Close(s.pidfd)
	p.noteExit(s, exitText(ws, err))
	*s = slot{num: s.num, pidfd: -1, ch: -1}
	p.ready.check(p)
	p.changedState()
}

// noteExit logs a child's end and feeds the backoff.
func (p *Pool) noteExit(s *slot, exit string) {
	age := p.now.Sub(s.started)
	switch {
	case s.draining || (s.killed && s.reason == "stop"):
		p.log.Debug("child exited", "event", "exit", "slot", s.num, "pid", s.pid, "exit", exit)
		return
	case s.killed:
		p.stats.Respawned++
		p.replace++
		return
	}
	p.stats.Respawned++
	p.replace++
	if !s.helloed && p.cfg.Mode != protocol.Shared || age < youngAge {
		p.backoff.fail(p.now, exit)
		p.log.Error("worker died young", "event", "crash", "slot", s.num, "pid", s.pid,
			"exit", exit, "age", age.Round(time.Millisecond), "retry_in", p.backoff.delay())
		return
	}
	p.log.Warn("child died", "event", "crash", "slot", s.num, "pid", s.pid, "exit", exit, "age", age.Round(time.Millisecond))
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
// speaks the protocol, SIGTERM for a shared-mode child.
func (p *Pool) retire(s *slot, why string) {
	if s.draining || s.killed {
		return
	}
	p.idle.remove(s.num)
	s.draining, s.reason = true, why
	if s.state != busy && s.state != ordered {
		s.deadline = p.now.Add(p.cfg.PingTimeout)
	}
	if p.cfg.Mode == protocol.Shared {
		p.signal(s, unix.SIGTERM)
		s.deadline = p.now.Add(p.cfg.GracefulTimeout)
	} else if s.ch >= 0 {
		p.send(s, protocol.Message{Type: protocol.Drain})
	}
	if why != "stop" {
		event := "retire"
		if why == "recycled" {
			event = "recycled"
		}
		p.log.Info("retiring child", "event", event, "slot", s.num, "pid", s.pid, "reason", why)
	}
	p.changedState()
}

// kill ends slot s's child with SIGKILL and stops listening to it: whatever
// it still sends is ignored. reap frees the slot. event names the log event:
// hung, garbage, killed, or stop (not logged).
func (p *Pool) kill(s *slot, event, why string) {
	if s.killed || !s.live() {
		return
	}
	s.killed, s.reason = true, why
	p.signal(s, unix.SIGKILL)
	p.closeChannel(s)
	if event != "stop" {
		p.log.Warn("killing child", "event", event, "slot", s.num, "pid", s.pid, "reason", why)
	}
	p.changedState()
}

// signal sends sig through the pidfd, so a recycled PID is never hit.
func (p *Pool) signal(s *slot, sig unix.Signal) {
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
