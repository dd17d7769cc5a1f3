package worker

import (
	"net/netip"

	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// A screening child's side of the PROXY header (docs/protocol.md, "PROXY
// protocol"; screen.go's look): the one peek judges the header, then the
// readiness rule judges what follows it. A header not whole yet sends the
// connection to the master unread; a whole one is read before the rule,
// or left for the handler's first read (proxyread.go) when the
// connection is served at once; before a Keep it is always read.

// screenHeader looks, for a screening child, at the header connection fd
// (accepted on listener l) owes, in peeked, what the child's one peek
// found (empty: nothing yet), without waiting and without reading. It
// returns the header (Len 0 when none is due: the socket's peer is the
// client) and ok; the header's address, if it gives one, is the client
// in hand's from then on. ok is false when the connection is not the
// child's to serve: closed (a header malformed or missing, a client
// gone), or given to the master unread (Keep, NotReady) because the
// header is not whole yet; err is the error of that Keep.
func (sc *screener) screenHeader(fd, l int, peeked []byte) (h proxyproto.Header, ok bool, err error) {
	setClientAddr(fd, netip.AddrPort{})
	if !sc.env.proxies() || !sc.env.trusted(fd, l) {
		return proxyproto.Header{}, true, nil
	}
	h, st := proxyproto.Parse(peeked)
	switch {
	case st == proxyproto.NeedMore:
		err = protocol.SendFD(int(sc.ch), protocol.Message{Type: protocol.Keep, Listener: uint16(l), Value: protocol.NotReady}, fd)
		unix.Close(fd)
		return h, false, err
	case st != proxyproto.Complete:
		unix.Close(fd)
		return h, false, nil
	}
	setClientAddr(fd, h.Addr)
	return h, true, nil
}

// afterHeader returns what follows header h (Len 0: none) in the child's
// peek of n bytes at connection fd, from listener l, and how many bytes
// of the header are still the socket's: all of them when the handler
// reads them with its first request (defers), else none, the header read
// now (proxyread.go). A header that took room the request may need (the
// peek full) is read now, and the whole peek's worth after it peeked
// again. ok is false, fd closed, for a client gone.
func (sc *screener) afterHeader(fd, l int, h proxyproto.Header, n int) (rest []byte, owes int, ok bool) {
	full := n == len(sc.peek)
	if h.Len == 0 || sc.defers(l) && !full {
		return sc.peek[h.Len:n], h.Len, true
	}
	if !sc.readHeader(fd, h.Len) {
		return nil, 0, false
	}
	if full {
		rest, ok = sc.peekAgain(fd)
		return rest, 0, ok
	}
	return sc.peek[h.Len:n], 0, true
}

// defers reports whether the handler of a connection from listener l
// reads its header with its first request (ReadsHeader): a KeepFDHandler
// that opted in, on a listener that does not terminate TLS.
func (sc *screener) defers(l int) bool {
	return sc.env.readsHeader && sc.keep != nil && sc.tls.on(l) == nil
}

// readHeader reads the n bytes of connection fd's header, which the
// child's peek holds. It reports false, fd closed, for a client gone.
func (sc *screener) readHeader(fd, n int) bool {
	if proxyproto.ReadPeeked(fd, sc.peek[:n]) != nil {
		unix.Close(fd)
		return false
	}
	return true
}

// keepAddr is the address a screening child's Keep (NotReady) carries for
// connection fd after header h: none if no header was due (h.Len 0), the
// header's, or after LOCAL or UNKNOWN the socket's peer, so that the
// master knows the header was read.
func keepAddr(fd int, h proxyproto.Header) string {
	switch {
	case h.Len == 0:
		return ""
	case h.Addr.IsValid():
		return addrText(h.Addr)
	}
	p, _ := peerAddrPort(fd)
	return addrText(p)
}
