package prefork

import (
	"fmt"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// Fork orders (zygote.go): a slot started under Preload while there is a
// zygote gets a back-channel but no process; its child end waits in the
// zygotes' queue until its zygote is ready, then goes with a Fork order.
// The slot is unborn until the forked child says hello with its PID
// (hello, below), or is released if its channel closes first.

// pendingFork is a slot waiting for its zygote's hello: the child's end of
// its back-channel, to send with the Fork.
type pendingFork struct {
	num, fd, gen int
}

// launch starts the process of slot num: forked by the ready zygote, queued
// for the zygote that starts, or exec'd when there is none.
func (zs *zygotes) launch(num int) (child, error) {
	z := zs.current
	if !zs.p.cfg.Preload || z == nil {
		return zs.exec.launch(num)
	}
	master, end, err := backChannel()
	if err != nil {
		return child{}, fmt.Errorf("fork slot %d: %w", num, err)
	}
	zs.pending = append(zs.pending, pendingFork{num: num, fd: end, gen: zs.p.gens.cur})
	if z.state == zygoteReady {
		zs.sendForks(z)
	}
	if zs.unborn == nil {
		zs.unborn = make(map[int]bool)
	}
	zs.unborn[num] = true
	return child{pidfd: -1, ch: master}, nil
}

// started logs a fork order; an exec'd child is the exec launcher's.
func (zs *zygotes) started(s *slot) {
	if !zs.unborn[s.num] {
		zs.exec.started(s)
		return
	}
	zs.p.log.Info("fork ordered", "event", "spawn", "slot", s.num, "generation", s.gen)
}

// sendForks sends the queued Fork orders of z's generation to z.
func (zs *zygotes) sendForks(z *zygote) {
	rest := zs.pending[:0]
	for _, f := range zs.pending {
		if f.gen != z.gen {
			rest = append(rest, f)
			continue
		}
		err := protocol.SendFD(z.ch, protocol.Message{Type: protocol.Fork, Listener: uint16(f.num)}, f.fd)
		unix.Close(f.fd) // the zygote has its copy, or the slot gets EOF and is released
		if err != nil {
			zs.p.log.Error("fork order", "slot", f.num, "pid", z.pid, "err", err)
			continue
		}
		z.forks++
		zs.forks++
	}
	zs.pending = rest
}

// dropPending forgets the queued Fork of slot num, if any: its child end
// is closed.
func (zs *zygotes) dropPending(num int) {
	for i, f := range zs.pending {
		if f.num == num {
			unix.Close(f.fd)
			zs.pending = append(zs.pending[:i], zs.pending[i+1:]...)
			return
		}
	}
}

// hello adopts a forked child: slot s gets the PID it announced, a pidfd
// to watch and signal it by, and its slot's cgroup. An exec'd child's
// hello changes nothing. It returns an error if no such process can be
// opened (gone already).
func (zs *zygotes) hello(s *slot, pid int) error {
	if !zs.unborn[s.num] {
		return nil
	}
	p := zs.p
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("%w: hello from a forked child with pid %d: pidfd_open: %v", protocol.ErrGarbage, pid, err)
	}
	s.pid, s.pidfd = pid, fd
	delete(zs.unborn, s.num)
	if err := p.poll.add(fd, eventIn, kindPidfd, s.num); err != nil {
		p.log.Error("watch child", "slot", s.num, "err", err)
	}
	p.mem.moveInto(s.num, pid)
	p.log.Debug("forked child said hello", "slot", s.num, "pid", pid)
	return nil
}

// closed releases slot s if it is a fork that did not say hello: there is
// nothing to reap. A child forked after all reads EOF, exits, and is
// reaped as an orphan (reapOrphans).
func (zs *zygotes) closed(s *slot) {
	if !zs.unborn[s.num] {
		return
	}
	delete(zs.unborn, s.num)
	p := zs.p
	zs.dropPending(s.num)
	switch {
	case s.reason == "stop", s.reason == zygoteGone: // forget counts the latter
	default:
		p.stats.Respawned++
		p.scaler.replace++
		if s.gen == p.gens.cur {
			p.backoff.fail(p.now, "fork: no hello")
		}
		p.log.Error("forked child gone before its hello", "event", "crash", "slot", s.num,
			"reason", s.reason, "failures", p.backoff.failures, "retry_in", p.backoff.delay())
	}
	p.free(s)
}

// forget makes z no longer the current zygote: its queued forks are
// released, to be exec'd or forked by the next one.
func (zs *zygotes) forget(z *zygote) {
	if zs.current != z {
		return
	}
	p := zs.p
	zs.current = nil
	released := 0
	for _, f := range append([]pendingFork(nil), zs.pending...) {
		if s := p.slots[f.num]; s.live() && zs.unborn[f.num] {
			s.reason = zygoteGone
			p.closeChannel(s) // releases it
			released += boolInt(f.gen == p.gens.cur)
		}
		zs.dropPending(f.num)
	}
	// The scaler starts as many again (exec'd, or forked by the next
	// zygote); a zygote that dies again releases them again, which must
	// not add up.
	p.scaler.replace = max(p.scaler.replace, released)
	p.changedState()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
