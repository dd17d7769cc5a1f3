package main

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"strconv"

	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// replies are the built-in handler's responses to a request it answers
// itself: "slot=K pid=P\n", kept alive or closing. Under
// --proxy-protocol-from (ACTD_PROXY_FROM set) the body names the client
// too, " client=HOST:PORT" before the newline: the address its PROXY
// header gave, else the socket's peer. They are made once for all
// otherwise; under the setting, made again in place (no allocation once
// the buffers have grown) for a connection whose client differs from the
// last one's, and not asked of the kernel: worker.RemoteAddrPort knows it.
// A client is compared as an address, and made text only when it differs.
type replies struct {
	prefix  string         // "slot=K pid=P"
	proxied bool           // the body names the client
	addr    netip.AddrPort // the client the replies name, as an address (the zero value: not one, or not known)
	client  []byte         // the client the replies name (proxied)
	made    bool           // keep and closing name client
	scratch []byte         // the next client's text
	keep    []byte
	closing []byte
	size    int // the body's length
}

func newReplies() *replies {
	a := &replies{prefix: "slot=" + os.Getenv(protocol.EnvSlot) + " pid=" + strconv.Itoa(os.Getpid())}
	_, a.proxied = os.LookupEnv(protocol.EnvProxyFrom)
	a.make(nil, false)
	return a
}

// open readies the replies for connection fd.
func (a *replies) open(fd int) {
	if !a.proxied {
		return
	}
	ap := worker.RemoteAddrPort(fd)
	switch {
	case !ap.IsValid(): // a unix socket's peer, or unknown
		a.openAddr(worker.RemoteAddr(fd))
	case a.made && ap == a.addr: // named already: no text made
	default:
		a.scratch = ap.AppendTo(a.scratch[:0])
		a.name(a.scratch)
		a.addr = ap
	}
}

// openAddr readies the replies for a connection whose client is addr (a
// TLS one's RemoteAddr: the PROXY header's client, else the peer; nil if
// unknown).
func (a *replies) openAddr(addr net.Addr) {
	if !a.proxied {
		return
	}
	client := "unknown"
	if addr != nil {
		client = addr.String()
	}
	a.scratch = append(a.scratch[:0], client...)
	a.name(a.scratch)
	a.addr = netip.AddrPort{}
}

// name makes the replies name client, unless they do already.
func (a *replies) name(client []byte) {
	if a.made && bytes.Equal(client, a.client) {
		return
	}
	a.client = append(a.client[:0], client...)
	a.make(a.client, true)
	a.made = true
}

// make builds both responses, the body naming client if named is set.
func (a *replies) make(client []byte, named bool) {
	a.size = len(a.prefix) + 1
	if named {
		a.size += len(" client=") + len(client)
	}
	a.keep = a.appendReply(a.keep[:0], client, named, false)
	a.closing = a.appendReply(a.closing[:0], client, named, true)
}

// appendReply appends one response to b, with "Connection: close" if
// closing is set.
func (a *replies) appendReply(b, client []byte, named, closing bool) []byte {
	b = append(b, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(a.size), 10)
	b = append(b, "\r\n"...)
	if closing {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, a.prefix...)
	if named {
		b = append(append(b, " client="...), client...)
	}
	return append(b, '\n')
}
