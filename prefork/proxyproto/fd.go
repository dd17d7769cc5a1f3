package proxyproto

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Peer returns the address getpeername(2) gives for the connected socket
// fd, false for a socket that is not IPv4 or IPv6 (a unix socket has no
// network to trust).
func Peer(fd int) (netip.Addr, bool) {
	var rsa unix.RawSockaddrAny
	size := uint32(unix.SizeofSockaddrAny)
	_, _, errno := unix.RawSyscall(unix.SYS_GETPEERNAME, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&size)))
	if errno != 0 {
		return netip.Addr{}, false
	}
	return inetAddr(&rsa)
}

// Accept is accept4(2) on the listening socket lfd with flags, asking for
// the peer's address: what Peer would tell of the connection, without a
// getpeername. It returns the connection and its peer (false for a socket
// that is not IPv4 or IPv6), or accept4's error (a unix.Errno).
func Accept(lfd, flags int) (int, netip.Addr, bool, error) {
	var rsa unix.RawSockaddrAny
	size := uint32(unix.SizeofSockaddrAny)
	fd, _, errno := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(lfd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&size)),
		uintptr(flags), 0, 0)
	if errno != 0 {
		return -1, netip.Addr{}, false, errno
	}
	a, ok := inetAddr(&rsa)
	return int(fd), a, ok, nil
}

// inetAddr decodes an IPv4 or IPv6 socket address, IPv4-mapped IPv6
// unmapped; false for another family.
func inetAddr(rsa *unix.RawSockaddrAny) (netip.Addr, bool) {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		return netip.AddrFrom4(p.Addr), true
	case unix.AF_INET6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		return netip.AddrFrom16(p.Addr).Unmap(), true
	}
	return netip.Addr{}, false
}

// Take looks for a header at the start of connection fd without waiting:
// it peeks (MSG_PEEK|MSG_DONTWAIT) into buf (at least MaxHeader bytes),
// and for a complete header reads exactly its bytes, so the request after
// it is still the socket's. It returns the header and Complete; NeedMore
// with nothing read when the bytes so far are a header's beginning, or
// none came yet (EAGAIN); Invalid for a malformed header, Absent for
// bytes no header starts with (Parse). err is set, with Invalid, when the
// client is gone (end of file, a socket error): close it as well.
func Take(fd int, buf []byte) (Header, Status, error) {
	n, err := recv(fd, buf[:MaxHeader], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return Header{}, NeedMore, nil
	case err != nil:
		return Header{}, Invalid, err
	case n == 0:
		return Header{}, Invalid, errGone
	}
	return TakePeeked(fd, buf[:n])
}

// TakePeeked is Take for a caller that peeked already: peeked holds the
// bytes at the start of connection fd, still the socket's (empty: none
// came yet). For a complete header it reads exactly the header's bytes
// into the start of peeked (the same bytes again), so that one peek
// serves the header and what the caller judges after it
// (peeked[Header.Len:]). It returns what Take returns, with no system call
// but that read.
func TakePeeked(fd int, peeked []byte) (Header, Status, error) {
	h, st := Parse(peeked)
	if st != Complete {
		return h, st, nil
	}
	if err := ReadPeeked(fd, peeked[:h.Len]); err != nil {
		return Header{}, Invalid, err
	}
	return h, Complete, nil
}

// ReadPeeked reads len(header) bytes from connection fd into header: a
// header that a peek showed whole (the same bytes again), so that what
// follows it is the socket's. It returns nil, or ECONNRESET for a read
// that failed or came short (the bytes were in the queue: the client
// reset the connection).
func ReadPeeked(fd int, header []byte) error {
	got, err := recv(fd, header, 0)
	if err != nil || got != len(header) {
		return errGone
	}
	return nil
}

// errGone is a client gone before or while its header was read.
var errGone = unix.ECONNRESET

// recv is recvfrom(2) without a source address or an allocation.
func recv(fd int, buf []byte, flags int) (int, error) {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])),
			uintptr(len(buf)), uintptr(flags), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(n), nil
	}
}
