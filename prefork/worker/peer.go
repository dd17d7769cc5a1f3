package worker

import (
	"net"
	"net/netip"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The peer of the connection in hand, as accept4(2) gave it: the child
// asks the kernel for the address once per connection it accepts, in the
// accept itself, and not again with getpeername(2) for the PROXY trust
// check (proxy.go), RemoteAddr, or a handler's access log. A connection
// the master hands over (Conn) comes with no peer: for it, and for a
// socket that is not IPv4 or IPv6, the callers ask getpeername as before.

// acceptedPeer is the record. A child serves one connection at a time, but
// RemoteAddr may be asked from a handler's goroutines, hence the lock; it
// is taken once per accept and once per question, with no allocation.
var acceptedPeer struct {
	mu   sync.Mutex
	fd   int            // the connection it belongs to, -1 for none
	addr netip.AddrPort // its peer, IPv4-mapped IPv6 unmapped, no zone
}

func init() { acceptedPeer.fd = -1 }

// setPeer records rsa, accept4's address for connection fd, as the peer
// of the connection in hand; a family other than IPv4 and IPv6 records
// none.
func setPeer(fd int, rsa *unix.RawSockaddrAny) {
	forgetScreened() // peeked.go: a new connection
	forgetOwed()     // proxyread.go
	ap, ok := inetAddrPort(rsa)
	acceptedPeer.mu.Lock()
	if ok {
		acceptedPeer.fd, acceptedPeer.addr = fd, ap
	} else {
		acceptedPeer.fd = -1
	}
	acceptedPeer.mu.Unlock()
}

// forgetPeer drops the record: the connection in hand was not accepted
// here (its fd may have the number of the last one that was).
func forgetPeer() {
	forgetScreened() // peeked.go
	forgetOwed()     // proxyread.go
	acceptedPeer.mu.Lock()
	acceptedPeer.fd = -1
	acceptedPeer.mu.Unlock()
}

// peerOf returns the peer accept4 gave for connection fd, false if fd is
// not the connection in hand accepted here over IPv4 or IPv6.
func peerOf(fd int) (netip.AddrPort, bool) {
	acceptedPeer.mu.Lock()
	defer acceptedPeer.mu.Unlock()
	if acceptedPeer.fd != fd || fd < 0 {
		return netip.AddrPort{}, false
	}
	return acceptedPeer.addr, true
}

// peerAddrPort returns connection fd's peer: the recorded one, else
// getpeername's; false for a socket that is not IPv4 or IPv6, or one
// whose peer is unknown.
func peerAddrPort(fd int) (netip.AddrPort, bool) {
	if ap, ok := peerOf(fd); ok {
		return ap, true
	}
	var rsa unix.RawSockaddrAny
	size := uint32(unix.SizeofSockaddrAny)
	_, _, errno := unix.RawSyscall(unix.SYS_GETPEERNAME, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&size)))
	if errno != 0 {
		return netip.AddrPort{}, false
	}
	return inetAddrPort(&rsa)
}

// inetAddrPort decodes an IPv4 or IPv6 socket address, an IPv4-mapped
// IPv6 address unmapped, the zone dropped (as net.TCPAddr's text shows
// it); false for another family.
func inetAddrPort(rsa *unix.RawSockaddrAny) (netip.AddrPort, bool) {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		return netip.AddrPortFrom(netip.AddrFrom4(p.Addr), uint16(port(p.Port))), true
	case unix.AF_INET6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		return netip.AddrPortFrom(netip.AddrFrom16(p.Addr).Unmap(), uint16(port(p.Port))), true
	}
	return netip.AddrPort{}, false
}

// RemoteAddrPort returns the client of connection fd as RemoteAddr does
// (the address its PROXY header gave, else the socket's peer), without an
// allocation and, for a connection the child accepted, without a system
// call: the form to append to a log line or a response
// (netip.AddrPort.AppendTo). It returns the zero value for a peer that is
// not IPv4 or IPv6 (a unix socket) or unknown.
func RemoteAddrPort(fd int) netip.AddrPort {
	if ap, ok := clientAddrPort(fd); ok { // proxy.go
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := peerAddrPort(fd)
	return ap
}

// tcpAddr is ap as RemoteAddr returns it.
func tcpAddr(ap netip.AddrPort) net.Addr { return net.TCPAddrFromAddrPort(ap) }
