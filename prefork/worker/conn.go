package worker

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// conn is the net.Conn a Handler and the Listener hand out: the accepted
// socket itself, switched to non-blocking and put in the runtime's poller
// through an *os.File, so deadlines work. Unlike net.FileConn it makes no
// duplicate fd and asks the kernel for no address until one is wanted:
// three system calls per connection (fcntl twice, epoll_ctl) where
// net.FileConn makes eight, and less garbage.
type conn struct {
	f      *os.File
	fd     int
	closed chan<- struct{} // if set, told once when the conn is closed (Listener)
	told   atomic.Bool     // closed was told (net/http may close from two goroutines)
}

// newConn makes a conn of the blocking socket fd, which it then owns. It
// returns nil if fd cannot be made non-blocking (closing fd).
func newConn(fd int, closed chan<- struct{}) *conn {
	// A fresh socket has no other status flag to keep: one F_SETFL, no
	// F_GETFL first.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil
	}
	return &conn{f: os.NewFile(uintptr(fd), "conn"), fd: fd, closed: closed}
}

// Read reads from the socket. Errors are *net.OpError, as net/http and
// other servers expect (a timeout's Timeout() is true), io.EOF at the end.
func (c *conn) Read(b []byte) (int, error) {
	n, err := c.f.Read(b)
	return n, c.opError("read", err)
}

// Write writes all of b, or returns a *net.OpError.
func (c *conn) Write(b []byte) (int, error) {
	n, err := c.f.Write(b)
	return n, c.opError("write", err)
}

// Close closes the socket; a Listener's conn then lets the child report
// idle and take the next connection. It returns an error for a second
// Close.
func (c *conn) Close() error {
	err := c.f.Close()
	if c.closed != nil && c.told.CompareAndSwap(false, true) {
		c.closed <- struct{}{}
	}
	return c.opError("close", err)
}

// CloseWrite shuts down the sending side (net/http does, before closing a
// connection whose request body it did not read).
func (c *conn) CloseWrite() error {
	return c.opError("shutdown", unix.Shutdown(c.fd, unix.SHUT_WR))
}

// LocalAddr returns the socket's address (getsockname), nil if unknown.
func (c *conn) LocalAddr() net.Addr {
	sa, err := unix.Getsockname(c.fd)
	if err != nil {
		return nil
	}
	return netAddr(sa)
}

// RemoteAddr returns the peer's address (getpeername), nil if unknown.
func (c *conn) RemoteAddr() net.Addr {
	sa, err := unix.Getpeername(c.fd)
	if err != nil {
		return nil
	}
	return netAddr(sa)
}

// SetDeadline, SetReadDeadline and SetWriteDeadline are net.Conn's.
func (c *conn) SetDeadline(t time.Time) error      { return c.f.SetDeadline(t) }
func (c *conn) SetReadDeadline(t time.Time) error  { return c.f.SetReadDeadline(t) }
func (c *conn) SetWriteDeadline(t time.Time) error { return c.f.SetWriteDeadline(t) }

// opError turns an *os.File error into the *net.OpError a net.Conn
// returns; nil and io.EOF stay as they are. A closed file's error becomes
// net.ErrClosed.
func (c *conn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, os.ErrClosed) {
		err = net.ErrClosed
	}
	return &net.OpError{Op: op, Net: "tcp", Err: err}
}

// netAddr converts a socket address to a net.Addr: *net.TCPAddr for IPv4
// and IPv6, *net.UnixAddr for a unix socket, nil otherwise.
func netAddr(sa unix.Sockaddr) net.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: sa.Name, Net: "unix"}
	}
	return nil
}
