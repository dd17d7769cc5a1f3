package prefork

import (
	"errors"
	"fmt"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// readChannel reads one message from slot s, and reports whether it read
// one. If more wait, the next round
// of the harvest (reports.go) reads the next one: one read per message, no
// read that only finds EAGAIN, and no child starves others.
// EOF or an error on the channel means the child is going: the channel is
// closed and reap will follow.
func (p *Pool) readChannel(s *slot) bool {
	if s.ch < 0 {
		return false
	}
	buf := p.readBuf[:] // one byte more than a packet: a longer one shows as garbage, not as a valid prefix
	n, fds, err := p.readPacket(s, buf)
	switch {
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		return false
	case err != nil || n == 0:
		closeFDs(fds)
		p.closeChannel(s)
		return false
	}
	m, err := protocol.Decode(buf[:n])
	if err == nil {
		p.reports.countChatter(s, m.Type, len(p.slots), p.now)
		err = p.onMessageFDs(s, m, fds)
	} else {
		closeFDs(fds)
	}
	if err != nil {
		p.stats.Garbage++
		p.kill(s, "garbage", err.Error())
	}
	return true
}

// readPacket reads one packet from s's back-channel, with the descriptor
// it carried (or -1). Only a child that announced handoff may send one
// (Keep): its channel is read with recvmsg, any other with a plain read.
// The ECONNRESET of a child that hung up with messages of the master's
// unread comes once, before the packets it sent last: readPacket reads on
// past it (hangup.go).
func (p *Pool) readPacket(s *slot, buf []byte) (n int, fds [2]int, err error) {
	n, fds, err = p.readRaw(s, buf)
	if errors.Is(err, unix.ECONNRESET) {
		n, fds, err = p.readRaw(s, buf)
	}
	return n, fds, err
}

// readRaw is one read or recvmsg of readPacket's.
func (p *Pool) readRaw(s *slot, buf []byte) (n int, fds [2]int, err error) {
	if !p.mode.takesFDs() || !s.caps.Has(protocol.CapHandoff) {
		n, err = rawRead(s.ch, buf)
		return n, noFDs, err
	}
	return rawRecvFD(s.ch, buf)
}

// closeFDs closes the descriptors a packet carried.
func closeFDs(fds [2]int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// onMessageFD is onMessageFDs for a message with at most one descriptor.
func (p *Pool) onMessageFD(s *slot, m protocol.Message, fd int) error {
	return p.onMessageFDs(s, m, [2]int{fd, -1})
}

// onMessage is onMessageFD for a message without a descriptor.
func (p *Pool) onMessage(s *slot, m protocol.Message) error {
	return p.onMessageFD(s, m, -1)
}

// onMessageFD applies one message from slot s, with the descriptor it
// carried or -1: it moves the slot along the message's event (step), then
// does what the event means. It returns an error wrapping
// protocol.ErrGarbage if the slot's state has no transition for the
// message (the one place where a message that does not fit is found), or
// if the message carries descriptors where its type has none, or not as
// many as it has (a Write two, any other one). The descriptors are the
// pool's: kept (Keep, Write) or closed.
func (p *Pool) onMessageFDs(s *slot, m protocol.Message, fds [2]int) error {
	s.heard = p.now
	ev, ok := messageEvent(m.Type)
	from := s.state
	fd := fds[0]
	if !fitsFDs(m.Type, fds) || !ok || !p.step(s, ev) {
		closeFDs(fds)
		if ok && !fitsFDs(m.Type, fds) {
			return fmt.Errorf("%w: %v with %d file descriptors", protocol.ErrGarbage, m.Type, countFDs(fds))
		}
		return fmt.Errorf("%w: %v from a child in state %v", protocol.ErrGarbage, m.Type, from)
	}
	to := s.state
	switch ev {
	case evHello:
		s.caps, s.helloAt = protocol.Caps(m.Listener), p.now
		if err := p.launcher.hello(s, int(m.Value)); err != nil {
			return err
		}
		if p.unfitTLS(s) { // tlsfds.go
			p.changedState()
			return nil
		}
		if err := p.proxyFit(s); err != nil { // proxy.go
			p.unfit(s, err)
			p.changedState()
			return nil
		}
	case evPong:
		p.onPong(s, m.Value)
	case evRequest:
		s.request = m.Text
	case evTally:
		p.tallies.add(m.Tallies) // tally.go
		return nil               // it moves nothing anyone watches
	case evBusy:
		p.onBusy(s, m)
	case evServed:
		p.onServed(s, m)
	case evIdle:
		p.onIdle(s, from)
	case evKeep:
		if int(m.Listener) >= len(p.listeners) {
			unix.Close(fd)
			return fmt.Errorf("%w: %v on listener %d of %d", protocol.ErrGarbage, m.Type, m.Listener, len(p.listeners))
		}
		if fd == fdLost { // the budget should prevent it: say so
			p.stats.Shed++
			p.log.Error("a connection given back was lost: the master is out of file descriptors", "event", "shed", "slot", s.num)
			break
		}
		if p.tlsKept(s, m, fds) { // tlsfds.go
			break
		}
		if m.Type == protocol.Write {
			if err := p.mode.finish(s, fd, fds[1], m); err != nil {
				return err
			}
			break
		}
		p.mode.park(s, fd, int(m.Listener), m.Value == protocol.NotReady, m.Addr)
	}
	p.mode.moved(s, from, to, ev)
	if ev != evPong {
		p.changedState() // a pong changes nothing anyone watches
	}
	return nil
}

// fitsFDs reports whether a message of type t may carry fds: a Write
// two, another type with HasFD one, any other none. A lost descriptor
// (fdLost) counts as one: the message says what was lost.
func fitsFDs(t protocol.Type, fds [2]int) bool {
	switch {
	case t == protocol.Write:
		return fds[0] >= 0 && fds[1] >= 0 || fds[0] == fdLost
	case t.HasFD():
		return (fds[0] >= 0 || fds[0] == fdLost) && fds[1] < 0
	}
	return fds[0] < 0 && fds[0] != fdLost
}

// countFDs returns how many descriptors a packet carried.
func countFDs(fds [2]int) int {
	n := 0
	for _, fd := range fds {
		if fd >= 0 {
			n++
		}
	}
	return n
}

func (p *Pool) onPong(s *slot, seq uint32) {
	if seq == s.pingSeq {
		s.pingSentAt = time.Time{}
		p.stats.pingFails = 0
	}
}

// onIdle: a child is ready (again), or done with a connection.
func (p *Pool) onIdle(s *slot, from state) {
	s.request = ""
	if from == busy || from == movingBusy {
		p.proven(s)
		p.measureEnd(s) // before settle: a child over the limit gets no next connection
	}
	if from.starting() {
		p.gens.ready.check(p)
	}
	if s.state == idle || s.state == standby {
		p.settle(s)
	}
}

// settle decides what a ready child does next: wait for orders (it joins
// the idle set), or go, because it is draining, has served its quota, or
// belongs to an old generation that the new one can replace. A child in
// standby waits for its go-ahead (exclusive.go) outside the idle set.
func (p *Pool) settle(s *slot) {
	switch {
	case s.fate == draining:
		s.deadline = p.now.Add(p.cfg.PingTimeout)
	case !s.roomFor(0):
		p.stats.Recycled++
		p.retire(s, "recycled")
	case s.gen != p.gens.cur && p.genHasIdle(p.gens.cur):
		p.retire(s, "old generation")
	case s.state == idle:
		p.idle.add(s.num)
	}
}

// onBusy: a child accepted a connection. A draining child can (exclusive
// mode: it accepts until it reads the drain): its exit deadline waits
// until it is idle again (settle), so the connection is not cut.
func (p *Pool) onBusy(s *slot, m protocol.Message) {
	s.deadline = time.Time{}
	s.listener = int(m.Listener)
	s.request = ""
	s.served++
	p.stats.Served++
}

// onServed: a child accepted and finished Value connections too short to
// report busy (the child reports B only for connections that last;
// docs/protocol.md): count them. In exclusive mode they come from an idle
// child; in dispatch mode from a busy one under KeepAccepting.
func (p *Pool) onServed(s *slot, m protocol.Message) {
	n := uint64(max(m.Value, 1))
	s.served += n
	p.stats.Served += n
	p.proven(s)
	p.measureEnd(s)
	if s.state == idle && (s.fate == draining || !s.roomFor(0)) {
		p.idle.remove(s.num)
		p.settle(s)
	}
}

// proven notes that s served connections: a child of the current
// generation old enough ends the start-failure streak. An older
// generation's child proves nothing about the worker now started.
func (p *Pool) proven(s *slot) {
	if s.served > 0 && s.gen == p.gens.cur && !p.now.Before(s.started.Add(youngAge)) {
		p.backoff.ok()
	}
}

// send writes m to slot s, and reports whether it went out. The channel is
// non-blocking: a child that lets its queue fill up does not read it, and
// is killed; one that hung up is not, so that what it sent last is read
// (sendFailed, hangup.go).
func (p *Pool) send(s *slot, m protocol.Message) bool {
	if s.ch < 0 {
		return false
	}
	var buf [protocol.MessageSize]byte
	if _, err := rawWrite(s.ch, m.Encode(buf[:])); err != nil {
		p.sendFailed(s, m.Type, err)
		return false
	}
	return true
}

// closeChannel stops reading slot s: its child is exiting or gone.
func (p *Pool) closeChannel(s *slot) {
	if s.ch < 0 {
		return
	}
	p.reports.poll.remove(s.ch)
	p.reports.dropChatter(s)
	unix.Close(s.ch)
	s.ch = -1
	p.move(s, evClose)
	if s.fate == living {
		s.deadline = p.now.Add(p.cfg.PingTimeout) // it should exit now
	}
	p.launcher.closed(s)
}
