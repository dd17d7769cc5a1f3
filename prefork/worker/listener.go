package worker

import (
	"context"
	"net"

	"golang.org/x/sys/unix"
)

// Listener returns a net.Listener for a Go server that runs unchanged
// under actd:
//
//	l, err := worker.Listener()
//	...
//	err = http.Serve(l, mux) // or any server that takes a net.Listener
//
// It runs the child side of the protocol as Serve does, in its own
// goroutine, and hands the server one connection at a time: Accept returns
// the next connection only after the one before it was closed, so the
// master sees this child busy from the accept until the server closes the
// connection (an idle keep-alive connection included: bound it, for
// net/http with Server.IdleTimeout), and idle after.
//
// Accept returns an error wrapping net.ErrClosed after a drain order, when
// the master is gone, or after Close — in each case after the connection
// in hand was closed — and the master's garbage as Serve would. Close stops
// the protocol (the child then exits when the server returns) and lets a
// connection in hand finish. Listener returns an error if the environment
// is not an actd child's.
func Listener() (net.Listener, error) {
	env, err := FromEnv()
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	l := &listener{
		conns:  make(chan net.Conn),
		closed: make(chan struct{}, 1),
		done:   make(chan struct{}),
		ctx:    ctx,
		stop:   stop,
		addr:   listenerAddr(env),
		wake:   newWakers(),
	}
	go l.run(env)
	return l, nil
}

// listener hands the connections the protocol loop accepts to Accept.
type listener struct {
	conns  chan net.Conn // the loop hands a connection over: a *conn, or a *tls.Conn over one
	tls    terminator    // the listeners that terminate TLS (tls.go)
	closed chan struct{} // the connection handed over was closed
	done   chan struct{} // closed when the loop has returned
	err    error         // the loop's result, set before done is closed
	ctx    context.Context
	stop   context.CancelFunc
	addr   net.Addr
	wake   *wakers // for the conns
}

// run is the protocol loop: Serve's, with a handler that hands each
// connection to Accept and waits until it is closed.
func (l *listener) run(env Env) {
	defer close(l.done)
	l.err = serveTLS(l.ctx, env, l.serve, nil, func(h connServer, t terminator) connServer {
		l.tls = t // before the first connection
		return h
	})
}

// serve hands fd to Accept as a conn and waits for its Close. After Close
// (of the listener), the connection is closed unserved.
func (l *listener) serve(fd, li int) {
	c := l.listenerConn(fd, li) // tls.go
	if c == nil {
		return
	}
	select {
	case l.conns <- c:
		<-l.closed
	case <-l.ctx.Done():
		c.Close()
		<-l.closed
	}
}

// Accept waits for the next connection. It returns an error wrapping
// net.ErrClosed once the protocol loop has ended without error, the loop's
// error otherwise.
func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
	}
	err := l.err
	if err == nil {
		err = net.ErrClosed
	}
	return nil, &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: err}
}

// Close stops the protocol loop: the child stops accepting, and Accept
// returns once the connection in hand, if any, is closed. It returns nil.
func (l *listener) Close() error {
	l.stop()
	return nil
}

// Addr returns the address of the first listening socket.
func (l *listener) Addr() net.Addr { return l.addr }

// listenerAddr returns the address of env's first listener, or an empty
// TCP address if that is unknown.
func listenerAddr(env Env) net.Addr {
	if len(env.Listeners) > 0 {
		if sa, err := unix.Getsockname(env.Listeners[0]); err == nil {
			if a := netAddr(sa); a != nil {
				return a
			}
		}
	}
	return &net.TCPAddr{}
}
