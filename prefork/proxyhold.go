package prefork

import (
	"net/netip"
	"time"

	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// The holder's side of the PROXY protocol (proxy.go): a connection the
// master accepts from a trusted peer owes its header before the filter
// looks at what follows. The master peeks, reads exactly the header's
// bytes, and keeps the client's address with the entry while it holds the
// connection; it sends it on the Conn that hands it over. A header that is
// malformed, or not complete within --hold-timeout, closes the connection
// without an answer (counted, and logged at most once per shedLogEvery).

// headerState says whether a held connection's PROXY header is still due.
type headerState uint8

const (
	noHeader    headerState = iota // none due: the peer is not trusted, or the header was read
	wantHeader                     // from a trusted peer: a header first
	maybeHeader                    // taken back from the store: a header, or (its header read by the master before) the request
)

// isBadHeader is what a look finds at a connection whose header is
// malformed: close it, counted.
const isBadHeader look = isGone + 1

// proxyHeld is the holder's count of headers.
type proxyHeld struct {
	taken  uint64    // headers the master read
	failed uint64    // connections closed for a bad or late header
	logged time.Time // when a failure was last logged
}

// trust marks entry i as owing its header (state) when n trusts its
// peer on its listener (getpeername's); else it owes none.
func (h *holder) trust(i int, n proxyproto.Networks, state headerState) {
	c := &h.conns[i]
	if !n.On(c.listener) {
		return
	}
	if a, ok := proxyproto.Peer(c.fd); ok {
		h.trustPeer(i, n, a, state)
	}
}

// trustPeer is trust for entry i whose peer is known: peer (the zero
// Addr: not IPv4 or IPv6, trusted nowhere).
func (h *holder) trustPeer(i int, n proxyproto.Networks, peer netip.Addr, state headerState) {
	if c := &h.conns[i]; n.Trusts(c.listener, peer) {
		c.header = state
	}
}

// acceptPeer is rawAccept on listener l (fd lfd) that, on a listener with
// networks in n, has accept4 give the peer's address (proxyproto.Accept),
// so that trustPeer needs no getpeername. It returns the connection, its
// peer (the zero Addr on a listener without networks, or for a peer that
// is not IPv4 or IPv6), or accept4's error.
func acceptPeer(lfd, l int, n proxyproto.Networks) (int, netip.Addr, error) {
	if !n.On(l) {
		fd, err := rawAccept(lfd)
		return fd, netip.Addr{}, err
	}
	fd, peer, _, err := proxyproto.Accept(lfd, unix.SOCK_CLOEXEC)
	return fd, peer, err
}

// takeHeader reads c's header if it came whole. It returns isReady once
// it is read (the filter looks at what follows), notYet while it is not
// whole, isGone for a client gone, isBadHeader for a malformed one (or
// for bytes that start no header, unless the header may have been read
// already: maybeHeader).
//
// A screening child that read a header gives the connection back (Keep,
// NotReady) with an address, the socket's peer after LOCAL or UNKNOWN; one
// given back without an address from a trusted peer still owes its
// header (wantHeader).
func (h *holder) takeHeader(c *heldConn) look {
	hd, st, err := proxyproto.Take(c.fd, h.peek)
	switch {
	case err != nil:
		return isGone
	case st == proxyproto.NeedMore:
		return notYet
	case st == proxyproto.Complete:
		c.header = noHeader
		if hd.Addr.IsValid() {
			c.addr = hd.Addr.String()
		}
		h.proxy.taken++
		return isReady
	case st == proxyproto.Absent && c.header == maybeHeader:
		c.header = noHeader
		return isReady
	}
	return isBadHeader
}

// proxyFailed counts held connection i, closed for its header (why), and
// logs it unless a line went out within shedLogEvery.
func (x *handoffMode) proxyFailed(i int, why string) {
	p, h := x.p, x.hold
	h.proxy.failed++
	if p.now.Sub(h.proxy.logged) < shedLogEvery {
		return
	}
	h.proxy.logged = p.now
	c := &h.conns[i]
	peer := "unknown"
	if a, ok := proxyproto.Peer(c.fd); ok {
		peer = a.String()
	}
	p.log.Warn("closed a connection without a valid PROXY header", "event", "proxy", "listener", p.listeners[c.listener].Name,
		"peer", peer, "reason", why, "failed", h.proxy.failed)
}

// connMessage is the Conn that hands held connection c to slot s: with
// the client's address for a worker that announced protocol.CapProxy.
func connMessage(s *slot, c *heldConn) protocol.Message {
	m := protocol.Message{Type: protocol.Conn, Listener: uint16(c.listener)}
	if s.caps.Has(protocol.CapProxy) {
		m.Addr = c.addr
	}
	return m
}

// validAddr returns addr if it is HOST:PORT, else "" (Decode checked a
// message's already; this guards the master's own copies).
func validAddr(addr string) string {
	if _, err := netip.ParseAddrPort(addr); err != nil {
		return ""
	}
	return addr
}
