package prefork

import (
	"fmt"
	"time"

	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// The accept filter's side of write completion (offload.go): a Write from a
// child, the sends as the sockets become writable, the send timeout, and
// the end of each response: parked or closed.

// finish takes response m from slot s: connection fd and its data. One
// from a worker that did not announce protocol.CapOffload, or that asks
// for more than any master takes, is garbage; the master then closes
// both. One beyond OffloadMax (a child of a generation from before a
// reload lowered it) or OffloadTotal goes to a child to write (refuse).
func (x *handoffMode) finish(s *slot, fd, data int, m protocol.Message) error {
	p := x.p
	f, ok := finishOf(m, fd, data, p.now)
	if !s.caps.Has(protocol.CapOffload) {
		rawClose(fd)
		rawClose(data)
		return fmt.Errorf("%w: %v from a worker that did not announce offload", protocol.ErrGarbage, m.Type)
	}
	if !ok {
		rawClose(fd)
		rawClose(data)
		return fmt.Errorf("%w: %v of %d bytes from offset %d, want at most %d (%s)", protocol.ErrGarbage,
			m.Type, m.Length, m.Offset, p.cfg.OffloadMax, protocol.EnvOffloadMax)
	}
	// Beyond OffloadMax: a child started before a reload lowered it.
	if uint64(f.size) > p.cfg.OffloadMax || !x.out.fits(f, p.cfg.OffloadTotal) {
		unix.SetNonblock(fd, false) // as a child expects it: the sender may have set it
		x.refuse(f)
		x.handOff()
		return nil
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		rawClose(fd)
		rawClose(data)
		p.stats.FinishFailed++
		return nil
	}
	p.stats.Finishing++
	i := x.out.add(f)
	x.sendTo(i)
	return nil
}

// refuse queues response f, beyond --offload-total, for the lowest idle
// child to write itself (giveBack), and logs the first refusal after a
// quiet spell.
func (x *handoffMode) refuse(f finishing) {
	p := x.p
	p.stats.OverTotal++
	x.out.refused = append(x.out.refused, f)
	if p.now.Sub(x.out.refusedLog) < shedLogEvery {
		return
	}
	x.out.refusedLog = p.now
	var age time.Duration
	if t := x.out.oldest(); !t.IsZero() {
		age = p.now.Sub(t).Round(time.Millisecond)
	}
	p.log.Warn("responses finished by the master hold --offload-total: children write the next ones", "event", "offload_total",
		"bytes", x.out.bytes, "offload_total", p.cfg.OffloadTotal, "connections", x.out.count, "oldest", age,
		"refused", p.stats.OverTotal)
}

// giveBack gives the oldest refused response to the lowest idle child
// that announced offload (Unsent), and reports whether it did.
func (x *handoffMode) giveBack() bool {
	p := x.p
	for _, s := range p.slots {
		if !p.idle.has(s.num) || !s.caps.Has(protocol.CapOffload) {
			continue
		}
		f := x.out.refused[0]
		m := protocol.Message{Type: protocol.Unsent, Listener: uint16(f.listener), Offset: uint64(f.off), Length: uint64(f.end - f.off)}
		if f.keep {
			m.Value = protocol.KeepAlive
		}
		if s.caps.Has(protocol.CapProxy) {
			m.Addr = f.addr
		}
		var buf [protocol.MessageSize + protocol.TrailerSize + protocol.MaxAddr]byte
		if err := rawSendFDs(s.ch, m.Encode(buf[:]), f.fd, f.data); err != nil {
			p.sendFailed(s, m.Type, err) // hangup.go; it stays, for the next child
			continue
		}
		x.out.refused = x.out.refused[1:]
		rawClose(f.fd)
		rawClose(f.data)
		p.idle.remove(s.num)
		p.move(s, evHandoff)
		s.listener = f.listener
		return true
	}
	return false
}

// sendTo sends what entry i's socket takes now, then waits for it to be
// writable, or ends the response.
func (x *handoffMode) sendTo(i int) {
	switch x.out.send(i, x.p.now) {
	case sendMore:
		x.watchSend(i)
	case sendDone:
		x.p.stats.Finished++
		x.done(i)
	default:
		x.p.stats.FinishFailed++
		x.drop(i)
	}
}

// sendEvent: finishing connection i is writable, or its client is gone.
func (x *handoffMode) sendEvent(i int) {
	if i < len(x.out.conns) && x.out.conns[i].fd >= 0 {
		x.sendTo(i)
	}
}

// watchSend registers entry i's socket in the loop's set for writability,
// once: edge-triggered, so each time the client takes bytes is one event.
func (x *handoffMode) watchSend(i int) {
	c := &x.out.conns[i]
	if c.registered {
		return
	}
	if err := x.p.poll.add(c.fd, unix.EPOLLOUT|eventEdge|unix.EPOLLRDHUP, kindOffload, i); err != nil {
		x.p.log.Error("watch finishing connection", "err", err)
		x.p.stats.FinishFailed++
		x.drop(i)
		return
	}
	c.registered = true
}

// done ends response i, all sent: the connection is parked for its next
// request (keep-alive, and the pool does not stop), or closed.
func (x *handoffMode) done(i int) {
	c := x.out.conns[i]
	fd := x.unwatchSend(i)
	if !c.keep || x.p.stop != nil {
		unix.Shutdown(fd, unix.SHUT_WR)
		rawClose(fd)
		return
	}
	if err := unix.SetNonblock(fd, false); err != nil { // a child expects it blocking (docs/protocol.md)
		rawClose(fd)
		return
	}
	x.park(nil, fd, c.listener, false, c.addr)
}

// drop ends response i unfinished: its client is gone, or took nothing for
// --send-timeout.
func (x *handoffMode) drop(i int) { rawClose(x.unwatchSend(i)) }

// unwatchSend forgets entry i and returns its connection, out of the
// loop's set.
func (x *handoffMode) unwatchSend(i int) int {
	if x.out.conns[i].registered {
		x.p.poll.remove(x.out.conns[i].fd)
	}
	fd := x.out.release(i)
	if x.full && x.hold.count+x.out.fds() < x.limit() {
		x.full = false
		x.watch()
	}
	return fd
}

// expireSends closes the connections whose client took nothing for
// SendTimeout, and the refused ones no child took back within it (after a
// reload to a worker without offload, none may); once the pool stops and
// its graceful timeout passed, every one.
func (x *handoffMode) expireSends() {
	cutoff := x.p.now.Add(-x.p.cfg.SendTimeout)
	killed := x.p.stop != nil && x.p.stop.killed
	for i := range x.out.conns {
		c := &x.out.conns[i]
		if c.fd >= 0 && (killed || c.moved.Before(cutoff)) {
			x.p.stats.SendTimeouts++
			x.p.log.Info("closed a slow reader", "event", "send_timeout", "listener", x.p.listeners[c.listener].Name,
				"left_bytes", c.end-c.off, "sent_bytes", c.off-(c.end-c.size), "age", x.p.now.Sub(c.since).Round(time.Millisecond))
			x.drop(i)
		}
	}
	kept := x.out.refused[:0]
	for _, f := range x.out.refused {
		if killed || f.moved.Before(cutoff) { // no child took it back in time (none announces offload?)
			x.p.stats.SendTimeouts++
			rawClose(f.fd)
			rawClose(f.data)
			continue
		}
		kept = append(kept, f)
	}
	x.out.refused = kept
}
