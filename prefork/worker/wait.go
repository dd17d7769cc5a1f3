package worker

import (
	"net"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// wakers are the eventfds that wake a conn's waiting read or write, one
// pair per server (Handler, Listener): it serves one connection at a time,
// and a stale wake-up only makes a wait look again.
type wakers struct {
	read, write int
	err         error // of making them; conns cannot be made then
}

// newWakers makes the eventfds (non-blocking, close-on-exec).
func newWakers() *wakers {
	w := &wakers{read: -1, write: -1}
	if w.read, w.err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); w.err != nil {
		return w
	}
	w.write, w.err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	return w
}

// wait waits until the socket is ready for events, d's deadline passes,
// d is woken (a new deadline, or Close), or a signal comes. It returns
// errTimeout past the deadline, net.ErrClosed once Close has begun, else
// nil for the caller to try again.
func (c *conn) wait(d *direction, events int16) error {
	d.waiting.Store(true)
	defer d.waiting.Store(false)
	// Looked at after waiting is set, as the wakers look at waiting after
	// setting what they change: one side sees the other.
	if c.closing.Load() {
		return net.ErrClosed
	}
	var ts *unix.Timespec
	if dl := d.deadline.Load(); dl != 0 {
		left := time.Until(time.Unix(0, dl))
		if left <= 0 {
			return errTimeout
		}
		t := unix.NsecToTimespec(int64(left))
		ts = &t
	}
	fds := [2]unix.PollFd{{Fd: int32(c.fd), Events: events}, {Fd: int32(d.efd), Events: unix.POLLIN}}
	_, err := unix.Ppoll(fds[:], ts, nil)
	c.yields.due()
	if err != nil && err != unix.EINTR {
		return err
	}
	if fds[1].Revents&unix.POLLIN != 0 {
		var buf [8]byte
		unix.Read(d.efd, buf[:]) // drain: this wait is the only one on it
	}
	if c.closing.Load() {
		return net.ErrClosed
	}
	return nil
}

// set sets d's deadline (zero t: none) and wakes a call waiting in d.
func (d *direction) set(t time.Time) error {
	var dl int64
	if !t.IsZero() {
		dl = max(t.UnixNano(), 1)
	}
	d.deadline.Store(dl)
	d.wakeIfWaiting()
	return nil
}

// expired returns errTimeout if d's deadline has passed, else nil.
func (d *direction) expired() error {
	if dl := d.deadline.Load(); dl != 0 && time.Now().UnixNano() >= dl {
		return errTimeout
	}
	return nil
}

// wakeIfWaiting wakes a call waiting in d, if any.
func (d *direction) wakeIfWaiting() {
	if d.waiting.Load() {
		one := uint64(1)
		unix.Write(d.efd, (*[8]byte)(unsafe.Pointer(&one))[:])
	}
}

// sysRecv is recv(2) with MSG_DONTWAIT on a blocking socket: it never
// blocks, and needs no address (unix.Recvfrom decodes one).
func sysRecv(fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(p), uintptr(len(b)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// sysSend is send(2) with MSG_DONTWAIT, and MSG_NOSIGNAL: a peer gone is
// EPIPE, not a signal.
func sysSend(fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, errno := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(p), uintptr(len(b)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
