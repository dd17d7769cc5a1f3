package worker

import (
	"net"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockAddr returns the address getsockname(2) or getpeername(2) (call:
// unix.SYS_GETSOCKNAME or unix.SYS_GETPEERNAME) gives for fd, as netAddr
// converts it, or nil if the call fails. unix.Getsockname and
// unix.Getpeername would ask getsockopt(SO_PROTOCOL) too for IPv4 and IPv6,
// a system call more per address that net/http asks for each connection.
func sockAddr(fd int, call uintptr) net.Addr {
	var rsa unix.RawSockaddrAny
	size := uint32(unix.SizeofSockaddrAny)
	_, _, errno := unix.RawSyscall(call, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&size)))
	if errno != 0 {
		return nil
	}
	switch rsa.Addr.Family {
	case unix.AF_INET:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(&rsa))
		return netAddr(&unix.SockaddrInet4{Port: port(p.Port), Addr: p.Addr})
	case unix.AF_INET6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(&rsa))
		return netAddr(&unix.SockaddrInet6{Port: port(p.Port), ZoneId: p.Scope_id, Addr: p.Addr})
	case unix.AF_UNIX:
		return netAddr(&unix.SockaddrUnix{Name: unixPath((*unix.RawSockaddrUnix)(unsafe.Pointer(&rsa)))})
	}
	return nil
}

// port converts a port in network byte order.
func port(p uint16) int {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return int(b[0])<<8 | int(b[1])
}

// unixPath returns a unix socket's path as unix.Getsockname does: up to
// the first NUL, an abstract socket's leading NUL written '@'.
func unixPath(p *unix.RawSockaddrUnix) string {
	path := make([]byte, 0, len(p.Path))
	for i, c := range p.Path {
		if c == 0 && i > 0 {
			break
		}
		if c == 0 {
			c = '@'
		}
		path = append(path, byte(c))
	}
	return string(path)
}
