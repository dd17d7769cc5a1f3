package prefork

import (
	"errors"
	"fmt"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// readChannel reads one message from slot s. If more wait, the next round
// of the harvest (reports.go) reads the next one: one read per message, no
// read that only finds EAGAIN, and no child starves others.
// EOF or an error on the channel means the child is going: the channel is
// closed and reap will follow.
func (p *Pool) readChannel(s *slot) {
	if s.ch < 0 {
		return
	}
	var buf [2 * protocol.MessageSize]byte // a longer packet shows as garbage, not as a valid prefix
	n, err := rawRead(s.ch, buf[:])
	switch {
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		return
	case err != nil || n == 0:
		p.closeChannel(s)
		return
	}
	m, err := protocol.Decode(buf[:n])
	if err == nil {
		err = p.onMessage(s, m)
	}
	if err != nil {
		p.stats.Garbage++
		p.kill(s, "garbage", err.Error())
	}
}

// onMessage applies one message from slot s. It returns an error wrapping
// ErrGarbage if the message does not fit the slot's state.
func (p *Pool) onMessage(s *slot, m protocol.Message) error {
	s.heard = p.now
	switch {
	case m.Type == protocol.Hello && s.state == starting && !s.helloed:
		s.helloed = true
		p.ready.check(p)
	case m.Type == protocol.Idle:
		return p.onIdle(s)
	case m.Type == protocol.Busy:
		return p.onBusy(s, m)
	case m.Type == protocol.Served:
		return p.onServed(s, m)
	case m.Type == protocol.Pong:
		if m.Value == s.pingSeq {
			s.pingSentAt = time.Time{}
			p.stats.pingFails = 0
		}
	default:
		return fmt.Errorf("%w: %v from a child in state %c", protocol.ErrGarbage, m.Type, s.letter())
	}
	return nil
}

// onIdle: a child is ready for an order.
func (p *Pool) onIdle(s *slot) error {
	switch {
	case s.state == starting && s.helloed:
		defer p.ready.check(p)
	case s.state == ordered && p.cfg.Mode == protocol.Exclusive: // registered its listeners
		p.armed(s)
	case s.state == ordered: // the accept found nothing
		defer p.resolveOrder(s, false) // once idle: it may take the next order itself
	case s.state == busy: // a connection is done
		if s.served > 0 && !p.now.Before(s.started.Add(youngAge)) {
			p.backoff.ok()
		}
		if s.moving { // told to register again: that comes next
			s.setState(ordered, p.now)
			p.changedState()
			return nil
		}
	default:
		return fmt.Errorf("%w: idle from a child in state %c", protocol.ErrGarbage, s.letter())
	}
	s.setState(idle, p.now)
	p.settle(s)
	return nil
}

// settle decides what an idle child does next: wait for orders, or go,
// because it is draining, has served its quota, or belongs to an old
// generation that the new one can replace.
func (p *Pool) settle(s *slot) {
	switch {
	case s.draining:
		s.deadline = p.now.Add(p.cfg.PingTimeout)
		return
	case s.limit > 0 && s.served >= s.limit:
		p.stats.Recycled++
		p.retire(s, "recycled")
		return
	case s.gen != p.gen && p.genHasIdle(p.gen):
		p.retire(s, "old generation")
		return
	}
	defer p.armNext()
	if p.cfg.Mode == protocol.Exclusive && !s.armed {
		return // not accepting yet: armNext gets to it in slot order
	}
	p.idle.add(s.num)
	p.rearmAll()
	p.changedState()
}

// onBusy: a child accepted a connection.
func (p *Pool) onBusy(s *slot, m protocol.Message) error {
	switch {
	case s.state == ordered && p.cfg.Mode == protocol.Dispatch:
		p.resolveOrder(s, true)
	case s.state == idle && p.cfg.Mode == protocol.Exclusive:
		p.idle.remove(s.num)
		s.listener = int(m.Listener)
	case s.state == ordered && s.moving: // accepted before it read the order
		p.movingBusy(s)
		s.listener = int(m.Listener)
	case s.state == busy && p.cfg.Mode == protocol.Dispatch: // another, under KeepAccepting
		s.listener = int(m.Listener)
	default:
		return fmt.Errorf("%w: busy from a child in state %c", protocol.ErrGarbage, s.letter())
	}
	s.setState(busy, p.now)
	s.served++
	p.stats.Served++
	p.changedState()
	return nil
}

// onServed: a child accepted and finished Value connections too short to
// report busy (the child reports B only for connections that last;
// docs/protocol.md): count them. In exclusive mode they come from an idle
// child; in dispatch mode from a busy one under KeepAccepting, whose busy
// clock they restart.
func (p *Pool) onServed(s *slot, m protocol.Message) error {
	exclusive := p.cfg.Mode == protocol.Exclusive && (s.state == idle || s.state == ordered && s.moving)
	dispatch := p.cfg.Mode == protocol.Dispatch && s.state == busy
	if !exclusive && !dispatch {
		return fmt.Errorf("%w: served from a child in state %c", protocol.ErrGarbage, s.letter())
	}
	if dispatch {
		s.since = p.now
	}
	n := uint64(max(m.Value, 1))
	s.served += n
	p.stats.Served += n
	if !p.now.Before(s.started.Add(youngAge)) {
		p.backoff.ok()
	}
	if s.state == idle && (s.draining || s.limit > 0 && s.served >= s.limit) {
		p.idle.remove(s.num)
		p.settle(s)
	}
	p.changedState()
	return nil
}

// send writes m to slot s. The channel is non-blocking: a child that lets
// its queue fill up does not read it, and is killed. It reports whether the
// message went out.
func (p *Pool) send(s *slot, m protocol.Message) bool {
	if s.ch < 0 {
		return false
	}
	var buf [protocol.MessageSize]byte
	if _, err := rawWrite(s.ch, m.Encode(buf[:])); err != nil {
		p.kill(s, "killed", fmt.Sprintf("send %v: %v", m.Type, err))
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
	unix.Close(s.ch)
	s.ch = -1
	p.idle.remove(s.num)
	if s.state == ordered {
		p.resolveOrder(s, false)
	}
	if p.arming == s.num {
		p.arming = -1
	}
	s.setState(exiting, p.now)
	if !s.killed && !s.draining {
		s.deadline = p.now.Add(p.cfg.PingTimeout) // it should exit now
	}
}
