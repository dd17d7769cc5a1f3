package worker

import (
	"unsafe"

	"github.com/actd/actd/prefork/proxyproto"

	"golang.org/x/sys/unix"
)

// The PROXY header read with the request (docs/protocol.md, "PROXY
// protocol"). A screening child whose one peek shows a trusted
// connection's header whole and the request after it ready serves the
// connection at once; read on its own, the header would cost a recv of
// its own. A KeepFDHandler that opts in (ReadsHeader) reads it instead,
// in the same system call as the start of its first request
// (ReadPastHeader): the library leaves the header's bytes in the socket
// and records how many the connection still owes. Any other handler reads
// the fd itself, so for it the library reads the header first, as it does
// for a connection that goes to the master (a Keep only ever gives back a
// connection whose header is read: the master takes one without an
// address from a trusted peer as still owing it).

// Option is a choice a handler makes of how the library serves it
// (ServeKeepFD, ServeKeepFDTLS).
type Option uint8

// ReadsHeader says the KeepFDHandler reads a connection's first bytes
// with ReadPastHeader, not read(2): the library may then leave a
// screened connection's PROXY header in the socket, for that read to
// take and drop. Peeked shows what follows the header either way.
const ReadsHeader Option = 1

// has reports whether opts holds o.
func has(opts []Option, o Option) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}

// owed is the connection in hand's header bytes still at the start of
// its socket, set by look for a connection it judged ready and cleared by
// every accept and hand-over (peer.go). Only the serving goroutine
// touches it.
var owed struct {
	fd, n int
	sink  [proxyproto.MaxHeader]byte // where the header's bytes are read to
}

func init() { owed.fd = -1 }

// setOwed records that connection fd's first n bytes are a header still
// unread (0: none).
func setOwed(fd, n int) { owed.fd, owed.n = fd, n }

// forgetOwed drops the record: a new connection.
func forgetOwed() { owed.fd, owed.n = -1, 0 }

// ReadPastHeader reads from connection fd into p as read(2) does, but
// first the PROXY header bytes the library left in the socket (only for a
// handler served with ReadsHeader), which it drops: one readv(2) takes
// them and what follows, up to len(p) bytes. It returns the bytes read
// into p (0 and no error for the client's close), or the read's error
// (EAGAIN after the socket's SO_RCVTIMEO, as read(2)). With no header
// owed, it is read(2).
func ReadPastHeader(fd int, p []byte) (int, error) {
	for owed.n > 0 && owed.fd == fd {
		n, err := readv2(fd, owed.sink[:owed.n], p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, nil
		case n < owed.n: // the header's bytes were all in the queue: rare
			owed.n -= n
			continue
		}
		n -= owed.n
		owed.n = 0
		return n, nil
	}
	for {
		n, err := unix.Read(fd, p)
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

// takeOwed reads the header connection fd still owes, if any, before the
// connection goes to the master (Keep, Write). It returns false if that
// failed (the client is gone): close the connection instead.
func takeOwed(fd int) bool {
	if owed.n == 0 || owed.fd != fd {
		return true
	}
	n := owed.n
	owed.n = 0
	return proxyproto.ReadPeeked(fd, owed.sink[:n]) == nil
}

// readv2 is readv(2) into a then b, without an allocation.
func readv2(fd int, a, b []byte) (int, error) {
	var iov [2]unix.Iovec
	iov[0].Base, iov[0].Len = &a[0], uint64(len(a))
	cnt := 1
	if len(b) > 0 {
		iov[1].Base, iov[1].Len = &b[0], uint64(len(b))
		cnt = 2
	}
	n, _, errno := unix.Syscall(unix.SYS_READV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(cnt))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
