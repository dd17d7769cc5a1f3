package worker

import (
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// The worker's side of the PROXY protocol (docs/protocol.md, "PROXY
// protocol"). Under --proxy-protocol-from the master names, in
// ACTD_PROXY_FROM, the peers whose connections start with a header. The
// child announces protocol.CapProxy; it reads the header of a connection it
// accepts itself from such a peer (exactly its bytes, after a peek), takes
// the address the master sends with a connection it hands over (Conn,
// Unsent), and gives it back with the connection (Keep, Write). The
// connection in hand's client is what RemoteAddr, the conn's RemoteAddr
// and Report show.

// proxySince is the protocol revision that added protocol.CapProxy.
const proxySince = 6

// headerTimeout bounds the wait for the header of a connection the child
// accepted itself (the master's --hold-timeout does for the ones it holds):
// a header not whole by then closes the connection. A variable for tests.
var headerTimeout = 10 * time.Second

// proxies reports whether the child reads PROXY headers: the master named
// networks and speaks revision 6.
func (e Env) proxies() bool { return e.Revision >= proxySince && e.Proxy.Any() }

// client is the connection in hand and its client's address from a PROXY
// header ("" for the socket's peer). A child serves one connection at a
// time (a Listener too: Accept waits for the last one's Close).
type client struct {
	fd   int
	addr string
}

var inHandClient atomic.Pointer[client]

// setClient makes fd the connection in hand, with addr. Without an
// address it only forgets the last one: no allocation per connection where
// no header gives one.
func setClient(fd int, addr string) {
	if addr != "" {
		inHandClient.Store(&client{fd: fd, addr: addr})
	} else if inHandClient.Load() != nil {
		inHandClient.Store(nil)
	}
}

// clientOf returns the address a PROXY header gave connection fd, "" if
// none did (or fd is not the connection in hand).
func clientOf(fd int) string {
	if c := inHandClient.Load(); c != nil && c.fd == fd {
		return c.addr
	}
	return ""
}

// reportedClient returns the connection in hand's client address from a
// header, for Report's text, "" for none.
func reportedClient() string {
	if c := inHandClient.Load(); c != nil {
		return c.addr
	}
	return ""
}

// RemoteAddr returns the client of connection fd (an FDHandler's or a
// KeepFDHandler's): the address its PROXY header gave (a
// *net.TCPAddr), else the socket's peer (as accept4 gave it, peer.go, or
// getpeername for a connection handed over), nil if unknown.
func RemoteAddr(fd int) net.Addr {
	if a := clientAddr(fd); a != nil {
		return a
	}
	return peerNetAddr(fd)
}

// peerNetAddr returns the socket's peer of connection fd: the one accept4
// gave, else getpeername's; nil if unknown.
func peerNetAddr(fd int) net.Addr {
	if ap, ok := peerOf(fd); ok {
		return tcpAddr(ap)
	}
	return sockAddr(fd, unix.SYS_GETPEERNAME)
}

// clientAddr returns the address a PROXY header gave connection fd, or nil.
func clientAddr(fd int) net.Addr {
	ap, err := netip.ParseAddrPort(clientOf(fd))
	if err != nil {
		return nil
	}
	return net.TCPAddrFromAddrPort(ap)
}

// trusted reports whether connection fd, accepted on listener l, comes
// from a peer that must send a header: the peer accept4 gave (peer.go),
// no getpeername.
func (e Env) trusted(fd, l int) bool {
	if !e.Proxy.On(l) {
		return false
	}
	a, ok := peerAddrPort(fd)
	return ok && e.Proxy.Trusts(l, a.Addr())
}

// admit makes connection fd, just accepted on listener l, the one in hand,
// after reading its header if it owes one: it waits up to headerTimeout
// for it. It reports false, fd closed, for a header malformed, missing or
// late, or a client gone.
func (e Env) admit(fd, l int) bool {
	setClient(fd, "")
	if !e.proxies() || !e.trusted(fd, l) {
		return true
	}
	var buf [proxyproto.MaxHeader]byte
	deadline := time.Now().Add(headerTimeout)
	for tries := 0; ; tries++ {
		h, st, err := proxyproto.Take(fd, buf[:])
		switch {
		case st == proxyproto.Complete:
			setClient(fd, addrText(h.Addr))
			return true
		case err != nil || st != proxyproto.NeedMore || !waitIn(fd, time.Until(deadline)):
			unix.Close(fd)
			return false
		case tries > 0:
			// Part of a header is in: the socket stays readable, so poll
			// would not wait for the rest. A balancer sends its header
			// whole; one that trickles costs this child 2 ms a look.
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// waitIn waits up to d for fd to be readable; false when d passed.
func waitIn(fd int, d time.Duration) bool {
	for d > 0 {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		ts := unix.NsecToTimespec(d.Nanoseconds())
		n, err := unix.Ppoll(fds, &ts, nil)
		if err == nil && n > 0 {
			return true
		}
		if err != nil && err != unix.EINTR {
			return false
		}
		if err == nil {
			return false // timed out
		}
	}
	return false
}

// addrText is a header's address as the wire carries it, "" for none.
func addrText(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// screenHeader reads, for a screening child, the header connection fd
// (accepted on listener l) owes, from peeked, what the child's one peek
// found (empty: nothing yet), without waiting. It returns the address to
// give back with a Keep ("" when no header is due: the socket's peer is
// the client), the header's length (0 for none: peeked[skip:] is what
// follows it) and go. go is false when the connection is not the child's
// to serve: closed (a header malformed or missing, a client gone), or
// given to the master unread (Keep, NotReady) because the header is not
// whole yet. After a LOCAL header the address is the socket's peer, so
// that the master knows the header was read.
func (sc *screener) screenHeader(fd, l int, peeked []byte) (addr string, skip int, ok bool, err error) {
	setClient(fd, "")
	if !sc.env.proxies() || !sc.env.trusted(fd, l) {
		return "", 0, true, nil
	}
	h, st, terr := proxyproto.TakePeeked(fd, peeked)
	switch {
	case st == proxyproto.NeedMore && terr == nil:
		err = protocol.SendFD(int(sc.ch), protocol.Message{Type: protocol.Keep, Listener: uint16(l), Value: protocol.NotReady}, fd)
		unix.Close(fd)
		return "", 0, false, err
	case st != proxyproto.Complete:
		unix.Close(fd)
		return "", 0, false, nil
	}
	if h.Addr.IsValid() {
		text := h.Addr.String() // once, for the client in hand and a Keep
		setClient(fd, text)
		return text, h.Len, true, nil
	}
	p, _ := peerAddrPort(fd)
	return addrText(p), h.Len, true, nil
}

// keepMessage is the Keep that gives connection fd (from listener l) back,
// with the client's address if a header gave one.
func keepMessage(fd int, l uint16, value uint32) protocol.Message {
	return protocol.Message{Type: protocol.Keep, Listener: l, Value: value, Addr: clientOf(fd)}
}

// proxyEnv parses ACTD_PROXY_FROM for n listeners; unset, nil.
func proxyEnv(n int) (proxyproto.Networks, error) {
	v, ok := os.LookupEnv(protocol.EnvProxyFrom)
	if !ok {
		return nil, nil
	}
	return proxyproto.ParseEnv(v, n)
}
