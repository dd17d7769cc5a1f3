package worker

import (
	"context"
	"fmt"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// KeepFDHandler serves one connection like an FDHandler, and may give it
// back to the master between two requests instead of waiting in the child
// for the next one. parkable is true for a connection the master handed
// over (an accept filter, docs/protocol.md); the handler may then return
// true, after a complete response and with no byte of the next request read
// (none in its buffers): the master holds the connection without a child
// until its next request is in, and hands it to whichever child is idle
// then. So that a next request begun but not whole can go back, such a
// handler reads no byte past the request it serves (docs/protocol.md,
// "Accept filters: pipelined and partial next requests"; the built-in
// handler's cmd/actd/httpd_exact.go peeks first). The handler returns
// false when it is done with the connection.
// Either way the fd is closed in this process after it returns. With
// parkable false it must serve the connection to its end.
type KeepFDHandler func(fd int, parkable bool) (giveBack bool)

// keepServer serves a connection handed over, fd open and the caller's to
// close, and reports whether to give it back.
type keepServer func(fd int) bool

func (h KeepFDHandler) server() connServer {
	return func(fd, _ int) {
		defer unix.Close(fd)
		h(fd, false)
	}
}

func (h KeepFDHandler) keeper() keepServer {
	return func(fd int) bool { return h(fd, true) }
}

// ServeKeepFD is ServeFD with a KeepFDHandler: idle keep-alive connections
// go back to the master under an accept filter. opts are the handler's
// choices (ReadsHeader).
func ServeKeepFD(ctx context.Context, h KeepFDHandler, opts ...Option) error {
	env, err := FromEnv()
	if err != nil {
		return err
	}
	env.readsHeader = has(opts, ReadsHeader)
	return serveEnvKeep(ctx, env, h.server(), h.keeper())
}

// takeHanded serves what the master hands over in m: a connection (Conn)
// or a response to write (Unsent, from a child that announced offload),
// and reports whether m was one. Any other message is left to the caller.
func takeHanded(env Env, ch channel, h connServer, keep keepServer, m protocol.Message, fds [2]int) (bool, error) {
	switch {
	case m.Type == protocol.Conn:
		return true, serveHanded(env, ch, h, keep, m, fds[0])
	case m.Type == protocol.Unsent && env.offloads() > 0:
		return true, writeUnsent(env, ch, m, fds[0], fds[1])
	case m.Type == protocol.Unsent:
		closeFDs(fds)
		return true, fmt.Errorf("%w: %v, not negotiated", protocol.ErrGarbage, m.Type)
	}
	return false, nil
}

// serveHanded serves connection fd, handed over in m (Conn), as one
// accepted after an order: Busy, serve, Idle. With keep, the connection may
// go back to the master (Keep, its fd attached) before the Idle.
func serveHanded(env Env, ch channel, h connServer, keep keepServer, m protocol.Message, fd int) error {
	l := int(m.Listener)
	if l >= len(env.Listeners) {
		unix.Close(fd)
		return fmt.Errorf("%w: connection from listener %d of %d", protocol.ErrGarbage, l, len(env.Listeners))
	}
	if err := ch.send(protocol.Busy, l, 0); err != nil {
		unix.Close(fd)
		return err
	}
	setClient(fd, m.Addr) // proxy.go
	forgetPeer()          // peer.go: fd may have the number of one accepted here
	if keep == nil || env.terminates(l) {
		h(fd, l)
		return ch.send(protocol.Idle, 0, 0)
	}
	var err error
	if keepWith(keep, ch, l, fd, env.offloads()) {
		err = protocol.SendFD(int(ch), keepMessage(fd, m.Listener, 0), fd)
	}
	unix.Close(fd)
	if err != nil {
		return err
	}
	return ch.send(protocol.Idle, 0, 0)
}
