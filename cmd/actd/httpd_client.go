package main

import (
	"net"
	"os"
	"strconv"

	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// replies are the built-in handler's responses to a request it answers
// itself: "slot=K pid=P\n", kept alive or closing. Under
// --proxy-protocol-from (ACTD_PROXY_FROM set) the body names the client
// too, " client=HOST:PORT" before the newline: the address its PROXY
// header gave, else the socket's peer; so they are made again for each
// connection then, and once for all otherwise.
type replies struct {
	prefix  string // "slot=K pid=P"
	proxied bool   // the body names the client
	keep    []byte
	closing []byte
	size    int // the body's length
}

func newReplies() *replies {
	a := &replies{prefix: "slot=" + os.Getenv(protocol.EnvSlot) + " pid=" + strconv.Itoa(os.Getpid())}
	_, a.proxied = os.LookupEnv(protocol.EnvProxyFrom)
	a.make("")
	return a
}

// open readies the replies for connection fd.
func (a *replies) open(fd int) {
	if a.proxied {
		a.openAddr(worker.RemoteAddr(fd))
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
	a.make(" client=" + client)
}

// make builds both responses with extra after the body's prefix.
func (a *replies) make(extra string) {
	body := a.prefix + extra + "\n"
	a.size = len(body)
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	a.keep = append(append(a.keep[:0], head+"\r\n"...), body...)
	a.closing = append(append(a.closing[:0], head+"Connection: close\r\n\r\n"...), body...)
}
