package worker

import (
	"errors"
	"time"
	"unsafe"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// Children first under an accept filter (docs/protocol.md, "Accept
// filters: children first"). A child that announced protocol.CapScreen
// accepts by itself, as in exclusive mode, and looks at each connection
// with the children's rule (acceptfilter.Whole: the master's head rule,
// and under http a body whole within the peek): a ready
// one is served at once, one that is not goes to the master (Keep with
// protocol.NotReady, its fd attached), which holds it and hands it over
// (Conn) once ready. The child is idle to the master from its first Idle
// on: connections handed over may come before its go-ahead to register.

// screenSince is the protocol revision that added protocol.CapScreen.
const screenSince = 4

// screens reports whether a child with env takes the fast path: an accept
// filter in dispatch mode, under a master of revision 4 or later.
func (e Env) screens() bool {
	return e.Mode == protocol.Dispatch && e.Filter != acceptfilter.None && e.Revision >= screenSince
}

// caps returns what the child announces in its Hello.
func (e Env) caps() protocol.Caps {
	c := protocol.CapHandoff
	if e.screens() {
		c |= protocol.CapScreen
	}
	if e.offloads() > 0 {
		c |= protocol.CapOffload
	}
	if len(e.tls) > 0 {
		c |= protocol.CapTLS
	}
	if e.proxies() {
		c |= protocol.CapProxy // proxy.go
	}
	return c
}

// screener is a screening child's side of each connection.
type screener struct {
	env     Env
	ch      channel
	filter  acceptfilter.Filter
	peek    []byte // acceptfilter.HeadLimit bytes, for every look
	h       connServer
	keep    keepServer // nil: h serves a connection to its end
	offload int64      // the most the master finishes (offload.go), 0 for none
	tls     terminator // the listeners that terminate TLS (tls.go)
}

// serveScreen runs a screening child until a drain, the master's end or
// garbage.
func serveScreen(env Env, ch channel, h connServer, keep keepServer) error {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(ep)
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: channelTag}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, env.Channel, &ev); err != nil {
		return err
	}
	sc := &screener{env: env, ch: ch, filter: env.Filter, peek: make([]byte, acceptfilter.HeadLimit), h: h, keep: keep, offload: env.offloads(), tls: env.tls}
	events := make([]unix.EpollEvent, len(env.Listeners)+1)
	var p pause
	var again retry
	registered := false
	report := newLateBusy(ch)
	for {
		n, err := waitEvents(ep, events, report)
		if err != nil {
			return err
		}
		if done, err := sc.orders(events[:n], ep, env, &registered, report); done || err != nil {
			return errors.Join(err, report.flush())
		}
		for _, ev := range events[:n] {
			if ev.Fd != channelTag {
				r := run{begin: time.Now(), idle: true, again: &again, screen: sc}
				if err := r.serve(env, report, h, int(ev.Fd), &p); err != nil {
					return err
				}
			}
		}
	}
}

// orders reads one message if the back-channel is readable: a connection
// handed over (served at once), a go-ahead to register (again), a ping, a
// drain. It reports done after a drain or the master's end.
func (sc *screener) orders(events []unix.EpollEvent, ep int, env Env, registered *bool, report *lateBusy) (bool, error) {
	for _, ev := range events {
		if ev.Fd != channelTag {
			continue
		}
		m, fds, err := sc.ch.recvFDs()
		if err != nil {
			return true, endOf(err)
		}
		if m.Type == protocol.Conn || m.Type == protocol.Unsent {
			if err := report.flush(); err != nil {
				closeFDs(fds)
				return true, err
			}
			_, err := takeHanded(env, sc.ch, sc.h, sc.keep, m, fds)
			return false, err
		}
		order, err := sc.ch.order(m)
		switch {
		case err != nil || order == protocol.Drain:
			return true, err
		case order == protocol.Accept:
			return false, sc.register(ep, env, registered)
		}
	}
	return false, nil
}

// register registers the listeners, or registers them again (to the back
// of their wait queues), and says Idle.
func (sc *screener) register(ep int, env Env, registered *bool) error {
	var err error
	if *registered {
		err = registerAgain(ep, env)
	} else {
		err = registerListeners(ep, env)
	}
	if err != nil {
		return err
	}
	*registered = true
	return sc.ch.send(protocol.Idle, 0, 0)
}

// look reports whether connection fd, just accepted on listener l, is
// ready to serve. One that is not is the master's now (Keep, NotReady);
// one whose client is gone is closed. Either way fd is closed then. One
// peek serves the PROXY header, if one is owed (read then, exactly its
// bytes, or left for the handler's first read: proxyread.go), and the
// readiness rule on what follows it.
func (sc *screener) look(fd, l int) (bool, error) {
	n, err := peek(fd, sc.peek)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		n = 0 // nothing yet
	case err != nil || n == 0:
		unix.Close(fd)
		return false, nil
	}
	h, ok, err := sc.screenHeader(fd, l, sc.peek[:n]) // proxy.go
	if !ok || err != nil {
		return false, err
	}
	rest, owes, ok := sc.afterHeader(fd, l, h, n)
	if !ok {
		return false, nil
	}
	if span, ready := sc.ready(l, rest); ready {
		setScreened(fd, rest, span) // peeked.go: the handler's first peek
		setOwed(fd, owes)           // proxyread.go
		return true, nil
	}
	if owes > 0 && !sc.readHeader(fd, owes) {
		return false, nil
	}
	err = protocol.SendFD(int(sc.ch), protocol.Message{Type: protocol.Keep, Listener: uint16(l), Value: protocol.NotReady, Addr: keepAddr(fd, h)}, fd)
	unix.Close(fd)
	return false, err
}

// peekAgain peeks at connection fd again: the bytes (none for nothing
// yet), false with fd closed for a client gone.
func (sc *screener) peekAgain(fd int) ([]byte, bool) {
	n, err := peek(fd, sc.peek)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return nil, true
	case err != nil || n == 0:
		unix.Close(fd)
		return nil, false
	}
	return sc.peek[:n], true
}

// ready applies the readiness rule of listener l to b, the bytes the
// client sent so far (none: not ready): the TLS one (a whole ClientHello)
// on a listener that terminates TLS, else the filter's, which also gives
// the first request's span where it found its end (acceptfilter.Span; 0
// otherwise).
func (sc *screener) ready(l int, b []byte) (span int, ready bool) {
	switch {
	case len(b) == 0:
		return 0, false
	case sc.tls.on(l) != nil:
		return 0, acceptfilter.HelloReady(b)
	}
	return sc.filter.Span(b)
}

// serve serves connection fd, accepted on listener l, and gives it back
// to the master (Keep) between two requests if the handler says so. It
// closes fd.
func (sc *screener) serve(fd, l int) error {
	if sc.keep == nil || sc.tls.on(l) != nil {
		sc.h(fd, l)
		return nil
	}
	var err error
	if keepWith(sc.keep, sc.ch, l, fd, sc.offload) && takeOwed(fd) { // proxyread.go: a header the handler left
		err = protocol.SendFD(int(sc.ch), keepMessage(fd, uint16(l), 0), fd)
	}
	unix.Close(fd)
	return err
}

// peek is recv(2) with MSG_PEEK|MSG_DONTWAIT: no allocation, no source
// address.
func peek(fd int, buf []byte) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])),
		uintptr(len(buf)), unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
