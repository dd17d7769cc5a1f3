package worker

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// conn is the net.Conn a Handler and the Listener hand out: the accepted
// socket itself, left blocking, read and written with plain system calls
// as ServeFD's handlers do. It stays out of the runtime's poller: parking
// and waking a goroutine there cost a child about 15 µs per request more
// than a blocking read (measured per request in the children's CPU time,
// docs/go.md), and a child serves one connection at a time anyway. Unlike
// net.FileConn it makes no duplicate fd and asks the kernel for no address
// until one is wanted.
//
// Deadlines work as in the net package, including one set from another
// goroutine to end a Read that waits (net/http does so after every
// request): a read or write that would block waits in ppoll(2) on the socket
// and on its server's wake-up eventfd, which SetDeadline and Close signal.
type conn struct {
	fd     int
	wake   *wakers
	yields *yielder        // after a wait (yield.go)
	closed chan<- struct{} // if set, told once when the conn is closed (Listener)
	told   atomic.Bool     // closed was told (net/http may close from two goroutines)

	use     sync.RWMutex // read-held by each call that uses fd; Close takes it to close fd
	closing atomic.Bool
	read    direction
	write   direction

	// Whether a Read waits before it reads (waitsFirst).
	answered  atomic.Bool // a Write ended since the last Read began
	streaming atomic.Bool // the last read filled its buffer
}

// direction is the state of reads or of writes.
type direction struct {
	deadline atomic.Int64 // unix nanoseconds, 0 for none
	waiting  atomic.Bool  // a call waits in ppoll
	efd      int          // the server's eventfd that wakes it
}

// newConn makes a conn of the blocking socket fd, which it then owns, woken
// through w. It returns nil, closing fd, if w has no eventfds.
func newConn(fd int, w *wakers, closed chan<- struct{}) *conn {
	if w.err != nil {
		unix.Close(fd)
		return nil
	}
	// As the net package does for every TCP connection: a response
	// written in parts (a flush, a stream) is not held back by Nagle's
	// algorithm. A unix socket refuses the option, which is harmless.
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c := &conn{fd: fd, wake: w, closed: closed, yields: yields}
	c.read.efd, c.write.efd = w.read, w.write
	return c
}

// Read reads from the socket. Errors are *net.OpError, as net/http and
// other servers expect (a timeout's Timeout() is true); io.EOF at the end.
func (c *conn) Read(b []byte) (int, error) {
	if !c.acquire() {
		return 0, c.opError("read", net.ErrClosed)
	}
	defer c.use.RUnlock()
	mustWait := c.waitsFirst(b)
	for {
		if err := c.read.expired(); err != nil {
			return 0, c.opError("read", err)
		}
		if mustWait {
			if err := c.wait(&c.read, unix.POLLIN); err != nil {
				return 0, c.opError("read", err)
			}
		}
		n, err := sysRecv(c.fd, b)
		mustWait = err == unix.EAGAIN
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			continue
		case err != nil:
			return 0, c.opError("read", err)
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		c.streaming.Store(n == len(b))
		return n, nil
	}
}

// waitsFirst reports whether a Read into b waits for the peer's bytes
// before it tries to read them: after a Write, the peer is likely still to
// answer what it was sent, and a read would find nothing (one system call
// lost per request of a keep-alive connection) — unless the last read
// filled its buffer: the peer sends more than is read at once (a stream,
// a pipeline), and its bytes are likely there.
func (c *conn) waitsFirst(b []byte) bool {
	return c.answered.Swap(false) && len(b) > 0 && !c.streaming.Load()
}

// Write writes all of b, or returns a *net.OpError and the bytes written.
func (c *conn) Write(b []byte) (int, error) {
	if !c.acquire() {
		return 0, c.opError("write", net.ErrClosed)
	}
	defer c.use.RUnlock()
	done := 0
	for done < len(b) {
		if err := c.write.expired(); err != nil {
			return done, c.opError("write", err)
		}
		n, err := sysSend(c.fd, b[done:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if err := c.wait(&c.write, unix.POLLOUT); err != nil {
				return done, c.opError("write", err)
			}
			continue
		case err != nil:
			return done, c.opError("write", err)
		}
		done += n
	}
	if done > 0 {
		c.answered.Store(true)
	}
	return done, nil
}

// Close wakes any call waiting on the socket, waits until none uses it,
// and closes it; a Listener's conn then lets the child report idle and
// take the next connection. It returns an error for a second Close.
func (c *conn) Close() error {
	if !c.closing.CompareAndSwap(false, true) {
		return c.opError("close", net.ErrClosed)
	}
	c.read.wakeIfWaiting()
	c.write.wakeIfWaiting()
	c.use.Lock()
	err := unix.Close(c.fd)
	c.use.Unlock()
	if c.closed != nil && c.told.CompareAndSwap(false, true) {
		c.closed <- struct{}{}
	}
	return c.opError("close", err)
}

// CloseWrite shuts down the sending side (net/http does, before closing a
// connection whose request body it did not read).
func (c *conn) CloseWrite() error {
	if !c.acquire() {
		return c.opError("shutdown", net.ErrClosed)
	}
	defer c.use.RUnlock()
	return c.opError("shutdown", unix.Shutdown(c.fd, unix.SHUT_WR))
}

// LocalAddr returns the socket's address (getsockname), nil if unknown.
func (c *conn) LocalAddr() net.Addr { return c.addr(unix.SYS_GETSOCKNAME) }

// RemoteAddr returns the client's address: the one its PROXY header gave
// (proxy.go), else the peer's (as accept4 gave it, else getpeername), nil
// if unknown.
func (c *conn) RemoteAddr() net.Addr {
	if !c.acquire() {
		return nil
	}
	defer c.use.RUnlock()
	if a := clientAddr(c.fd); a != nil { // asked while fd is this conn's
		return a
	}
	return peerNetAddr(c.fd)
}

func (c *conn) addr(call uintptr) net.Addr {
	if !c.acquire() {
		return nil
	}
	defer c.use.RUnlock()
	return sockAddr(c.fd, call)
}

// SetDeadline, SetReadDeadline and SetWriteDeadline are net.Conn's; a call
// waiting in the direction set is woken to look at its new deadline.
func (c *conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *conn) SetReadDeadline(t time.Time) error  { return c.read.set(t) }
func (c *conn) SetWriteDeadline(t time.Time) error { return c.write.set(t) }

// acquire read-holds use for a call on fd. It returns false, holding
// nothing, once Close has begun.
func (c *conn) acquire() bool {
	c.use.RLock()
	if c.closing.Load() {
		c.use.RUnlock()
		return false
	}
	return true
}

// opError turns a system call's error into the *net.OpError a net.Conn
// returns; nil and io.EOF stay as they are.
func (c *conn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Err: err}
}

// errTimeout is a call past its deadline: os.ErrDeadlineExceeded, as the
// net package returns, whose Timeout() is true.
var errTimeout error = os.ErrDeadlineExceeded

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
