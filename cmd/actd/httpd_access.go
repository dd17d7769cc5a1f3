package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/actd/actd/accesslog"
	"github.com/actd/actd/prefork/worker"
)

// handlerLog is the built-in handler's access log (--access-log): one
// line per request whose request line came, with the status and body
// bytes of the answer, an error answer included. Off, it costs a nil
// check per request. Each such request is also counted for the master's
// metrics (worker.Tally), log or not.
type handlerLog struct {
	log    *accesslog.Logger // nil: off
	e      accesslog.Entry   // the request in hand; its Header reads what requestRules kept
	inHand bool              // a request line came since the last done
	remote []byte            // the client's text, for open
}

// newHandlerLog returns the access log the master's environment asks for.
// A malformed environment is reported on stderr and leaves the log off.
func newHandlerLog() *handlerLog {
	l, err := accesslog.FromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "actd child %d: access log off: %v\n", os.Getpid(), err)
	}
	return &handlerLog{log: l}
}

// open takes connection fd: its client's address, as worker.RemoteAddrPort
// knows it (no system call for a connection the child accepted), a new
// string only when it differs from the last connection's.
func (h *handlerLog) open(fd int) {
	if h.log == nil {
		return
	}
	if ap := worker.RemoteAddrPort(fd); ap.IsValid() {
		h.remote = ap.AppendTo(h.remote[:0])
		keep(&h.e.Remote, h.remote)
		return
	}
	h.e.Remote = "-"
}

// openAddr takes a connection from client (HOST:PORT, or "-").
func (h *handlerLog) openAddr(client string) {
	if h.log != nil {
		h.e.Remote = client
	}
}

// seen notes a request line (without its line end): when it came, for
// the tally (worker.Tally), and, with the log on, what it asks.
func (h *handlerLog) seen(line []byte) {
	h.e.Start, h.inHand = time.Now(), true
	if h.log == nil {
		return
	}
	method, rest, _ := bytes.Cut(line, []byte(" "))
	target, proto, _ := bytes.Cut(rest, []byte(" "))
	path, query, _ := bytes.Cut(target, []byte("?"))
	keep(&h.e.Method, method)
	keep(&h.e.Path, path)
	keep(&h.e.Query, query)
	keep(&h.e.Proto, proto)
}

// keep sets *s to b, allocating only when it changed: a client repeating
// one request costs no allocation.
func keep(s *string, b []byte) {
	if string(b) != *s {
		*s = string(b)
	}
}

// done counts the request seen last for the master (worker.Tally) and
// logs it, answered with status and bytes of body, and forgets it;
// without a request line seen, it counts and logs nothing.
func (h *handlerLog) done(status int, bytes int64) {
	if !h.inHand {
		return
	}
	h.inHand = false
	h.e.Duration = time.Since(h.e.Start)
	worker.Tally(status, h.e.Duration)
	if h.log == nil {
		return
	}
	h.e.Status, h.e.Bytes = status, bytes
	if err := h.log.Log(&h.e); err != nil {
		fmt.Fprintf(os.Stderr, "actd child %d: %v\n", os.Getpid(), err)
	}
}
