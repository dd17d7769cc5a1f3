package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/actd/actd/accesslog"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// Handler serves one connection. Serve closes the connection after it returns.
type Handler func(net.Conn)

// FDHandler serves one connection given as a connected, blocking socket fd.
// ServeFD closes the fd after it returns. It is the fast path: no netpoller,
// no duplicate fd; the child serves one connection at a time anyway.
type FDHandler func(fd int)

// connServer serves the connection fd, accepted on listener l, and
// closes it.
type connServer func(fd, l int)

func (h Handler) server() connServer {
	w := newWakers()
	return func(fd, _ int) {
		c := newConn(fd, w, nil)
		if c == nil {
			return
		}
		defer c.Close()
		h(c)
	}
}

func (h FDHandler) server() connServer {
	return func(fd, _ int) {
		defer unix.Close(fd)
		h(fd)
	}
}

// Serve runs the child side of the protocol with the environment the master
// set (FromEnv). It returns nil after a drain order, when the master is gone,
// or when ctx is done — in each case after the connection in hand is served.
// It returns an error if the environment is not an actd child's, or if the
// master sends garbage.
func Serve(ctx context.Context, h Handler) error {
	env, err := FromEnv()
	if err != nil {
		return err
	}
	return ServeEnv(ctx, env, h)
}

// ServeFD is Serve with an FDHandler.
func ServeFD(ctx context.Context, h FDHandler) error {
	env, err := FromEnv()
	if err != nil {
		return err
	}
	return serveEnv(ctx, env, h.server())
}

// ServeEnv is Serve with an explicit Env.
func ServeEnv(ctx context.Context, env Env, h Handler) error {
	return serveTLS(ctx, env, h.server(), nil, h.tlsServer)
}

func serveEnv(ctx context.Context, env Env, h connServer) error {
	return serveEnvKeep(ctx, env, h, nil)
}

// serveEnvKeep is serveEnv with keep, which serves the connections the
// master hands over and may give them back (handoff.go); nil: h serves
// them, to their end.
func serveEnvKeep(ctx context.Context, env Env, h connServer, keep keepServer) error {
	env.closeOnExec()
	defer accesslog.FlushAll() // the access log's last lines (accesslog/buffer.go)
	h, keep = h.yielding(), keep.yielding()
	// Start the runtime's poller now, while fds are free: timers (the
	// pause after EMFILE, a handler's sleep) need it, and a runtime that
	// cannot create it later, out of fds, dies instead of backing off.
	time.Sleep(time.Nanosecond)
	switch env.Mode { // the one place the child's mode is decided
	case protocol.Shared:
		return serveShared(ctx, env, h)
	case protocol.Exclusive:
		return serveChannel(ctx, env, h, serveExclusive)
	}
	if env.screens() {
		return serveChannel(ctx, env, h, func(env Env, ch channel, h connServer) error {
			return serveScreen(env, ch, h, keep)
		})
	}
	return serveChannel(ctx, env, h, func(env Env, ch channel, h connServer) error {
		return serveDispatch(env, ch, h, keep)
	})
}

// serveChannel says hello and idle on the back-channel, then serves in
// mode until the master drains it or is gone, or ctx is done.
func serveChannel(ctx context.Context, env Env, h connServer, mode func(Env, channel, connServer) error) error {
	ch := channel(env.Channel)
	// ctx ends the wait for orders: shutting down our read side makes the
	// blocked read return EOF.
	stop := context.AfterFunc(ctx, func() { unix.Shutdown(env.Channel, unix.SHUT_RD) })
	defer stop()
	if err := ch.send(protocol.Hello, int(env.caps()), uint32(os.Getpid())); err != nil {
		return err
	}
	if err := ch.send(protocol.Idle, 0, 0); err != nil {
		return err
	}
	defer flushTally() // tally.go: what was counted and not sent yet
	return mode(env, ch, h)
}

// serveDispatch waits for orders on the back-channel, and for connections
// handed over (Conn) under an accept filter.
func serveDispatch(env Env, ch channel, h connServer, keep keepServer) error {
	var p pause
	report := newLateBusy(ch)
	for {
		m, fds, err := ch.recvFDs()
		if err != nil {
			return endOf(err)
		}
		if handed, err := takeHanded(env, ch, h, keep, m, fds); handed || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		order, err := ch.order(m)
		switch {
		case err != nil:
			return err
		case order == protocol.Drain:
			return nil
		case order == protocol.Accept:
			err = acceptOrder(env, ch, h, m, &p, report)
		}
		if err != nil {
			return err
		}
	}
}

// acceptOrder carries out one accept order: busy, serve, idle; or idle at
// once if there was nothing to accept. Under KeepAccepting it serves the
// connections waiting after that one too, before the idle.
func acceptOrder(env Env, ch channel, h connServer, m protocol.Message, p *pause, report *lateBusy) error {
	l := int(m.Listener)
	if l >= len(env.Listeners) {
		return fmt.Errorf("%w: accept on listener %d of %d", protocol.ErrGarbage, l, len(env.Listeners))
	}
	begin := time.Now()
	c, err := acceptOne(env.Listeners[l])
	if err != nil {
		p.wait()
	} else {
		p.reset()
	}
	if c >= 0 {
		if err := report.busyNow(l); err != nil {
			unix.Close(c)
			return err
		}
		if env.admit(c, l) { // proxy.go: its PROXY header first, if it owes one
			h(c, l)
		}
		if m.Value == protocol.KeepAccepting {
			if err := keepAccepting(env, report, h, l, p, begin); err != nil {
				return err
			}
		}
	}
	return report.idleNow()
}

// keepAccepting accepts and serves the connections waiting on listener l
// after the order's first one (accepted at begin), as one run, reporting
// them as exclusive mode does (B for one that lasts, S counting short ones);
// the last S goes out before the caller's I.
func keepAccepting(env Env, report *lateBusy, h connServer, l int, p *pause, begin time.Time) error {
	r := run{begin: begin, served: 1}
	if err := r.serve(env, report, h, l, p); err != nil {
		return err
	}
	return report.flush()
}

// endOf turns the end of the back-channel into Serve's result.
func endOf(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
