package worker

import (
	"net"
	"net/netip"
	"os"
	"sync"
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

// inHandClient is the connection in hand and its client's address from a
// PROXY header (the zero value for the socket's peer), kept as the header
// gave it and made text only where text is asked for: a Keep or a Write
// to the master (clientOf), a report, RemoteAddr. A child serves one
// connection at a time (a Listener too: Accept waits for the last one's
// Close); RemoteAddr may be asked from a handler's goroutines, hence the
// lock, taken once per connection and once per question, with no
// allocation.
var inHandClient struct {
	mu   sync.Mutex
	fd   int // -1 for none
	addr netip.AddrPort
}

func init() { inHandClient.fd = -1 }

// setClientAddr makes fd the connection in hand, with addr (the zero
// value: no address from a header).
func setClientAddr(fd int, addr netip.AddrPort) {
	inHandClient.mu.Lock()
	if addr.IsValid() {
		inHandClient.fd, inHandClient.addr = fd, addr
	} else {
		inHandClient.fd = -1
	}
	inHandClient.mu.Unlock()
}

// setClient is setClientAddr for the address the master sent with a
// connection it hands over (HOST:PORT, "" for none): text that does not
// parse is none.
func setClient(fd int, addr string) {
	ap, _ := netip.ParseAddrPort(addr)
	setClientAddr(fd, ap)
}

// clientAddrPort returns the address a PROXY header gave connection fd,
// false if none did (or fd is not the connection in hand).
func clientAddrPort(fd int) (netip.AddrPort, bool) {
	inHandClient.mu.Lock()
	defer inHandClient.mu.Unlock()
	if inHandClient.fd != fd || fd < 0 {
		return netip.AddrPort{}, false
	}
	return inHandClient.addr, true
}

// clientOf returns, as the wire carries it, the address a PROXY header
// gave connection fd, "" if none did (or fd is not the connection in
// hand).
func clientOf(fd int) string {
	ap, _ := clientAddrPort(fd)
	return addrText(ap)
}

// reportedClient returns the connection in hand's client address from a
// header, for Report's text (formatted only when the report is sent),
// the zero value for none.
func reportedClient() netip.AddrPort {
	inHandClient.mu.Lock()
	defer inHandClient.mu.Unlock()
	if inHandClient.fd < 0 {
		return netip.AddrPort{}
	}
	return inHandClient.addr
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
	ap, ok := clientAddrPort(fd)
	if !ok {
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
	setClientAddr(fd, netip.AddrPort{})
	if !e.proxies() || !e.trusted(fd, l) {
		return true
	}
	var buf [proxyproto.MaxHeader]byte
	deadline := time.Now().Add(headerTimeout)
	for tries := 0; ; tries++ {
		h, st, err := proxyproto.Take(fd, buf[:])
		switch {
		case st == proxyproto.Complete:
			setClientAddr(fd, h.Addr)
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
