package worker

import (
	"errors"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/actd/actd/protocol"
)

// current is the child's reporter, for Report: a child serves one
// connection at a time, so the request in hand is the process's.
var current atomic.Pointer[lateBusy]

// Report tells the master what the connection in hand is serving, for
// example "GET /path": `actd status` shows it beside the slot, and the
// master's logs about a busy child name it. For a connection whose PROXY
// header gave the client's address, " from HOST:PORT" is appended. Report("") says the request is
// done (a keep-alive connection waits for the next). text is cut to
// protocol.MaxText bytes and made valid UTF-8.
//
// Report sends nothing at once: like the busy report, the text goes out
// once the request has run 5 ms (noticed within 50 ms while requests follow
// one another), so short requests cost the master nothing. It returns nil
// and drops text outside actd, in shared mode, under a master of protocol
// revision 1 (ACTD_PROTOCOL), or while no connection is in hand; it returns
// the error of a send to the master (Serve and Accept return it too).
// Report may be called from any goroutine.
func Report(text string) error {
	b := current.Load()
	if b == nil || !b.request.allowed {
		return nil
	}
	return b.report(text)
}

// Requests wraps h so that each request is reported to the master (Report)
// as its method and path, for example "GET /index.html" (the query is left
// out: it may carry secrets, and status is shown to operators), while h
// serves it. It also applies what the master's environment asks of every
// worker (access.go): an access-log line per request (--access-log), 413
// for a body over --max-request-body (at once for its Content-Length; for
// a chunked one, once it passes the limit, if no response started), 431
// for more than MaxHeaderFields header fields, and a handler's panic
// logged as one entry at priority err (errorlog.go) before the connection
// is closed.
func Requests(h http.Handler) http.Handler {
	e := newEdge()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b := current.Load(); b != nil && b.request.allowed {
			b.report(r.Method + " " + r.URL.Path)
			defer b.report("")
		}
		e.serve(h, w, r)
	})
}

// requestReport is the request in hand as the master knows it. Fields are
// guarded by the lateBusy's mutex.
type requestReport struct {
	allowed bool           // the master speaks revision 2: R may be sent
	text    string         // the request in hand, "" for none
	client  netip.AddrPort // its client from a PROXY header, shown after text; zero for none
	since   time.Duration  // when text was set, on the lateBusy's clock
	sent    bool           // text went out: the master shows it
}

func (r *requestReport) clear() { r.text, r.client, r.sent = "", netip.AddrPort{}, false }

// shown is the request's text as the master gets it: " from HOST:PORT"
// appended for a client from a PROXY header (made only here, for the few
// requests that last), cut to protocol.MaxText.
func (r *requestReport) shown() string {
	if !r.client.IsValid() {
		return r.text
	}
	return protocol.Truncate(r.text + " from " + r.client.String())
}

// report sets the request in hand. A request that replaces one the master
// shows goes out when due (requestDue); the end of one it shows ("") goes
// out at once.
func (b *lateBusy) report(text string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.active {
		return nil
	}
	if text == "" {
		wasSent := b.request.sent
		b.request.clear()
		if wasSent && b.reported {
			return b.ch.sendText(protocol.Request, "")
		}
		return nil
	}
	// proxy.go: behind a balancer, the client is worth showing (shown)
	b.request.text, b.request.client = protocol.Truncate(text), reportedClient()
	b.request.since, b.request.sent = b.now(), false
	if !b.armed {
		b.armed = true
		b.timer.Reset(busyReportAfter)
	}
	return nil
}

// requestDue, from the timer, sends the request in hand once it has run
// busyReportAfter and the master sees the child busy, or sets the timer
// again for a younger one.
func (b *lateBusy) requestDue() {
	r := &b.request
	if !b.reported || b.err != nil || r.text == "" || r.sent {
		return
	}
	if age := b.now() - r.since; age < busyReportAfter {
		b.rearm(age)
		return
	}
	r.sent = true
	b.err = b.ch.sendText(protocol.Request, r.shown())
}

// busyNow reports a connection on listener l busy at once (a dispatch
// order's first connection).
func (b *lateBusy) busyNow(l int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active, b.reported, b.started, b.listener = true, true, b.now(), l
	b.request.clear()
	return b.ch.send(protocol.Busy, l, 0)
}

// idleNow reports the child idle at once (the end of a dispatch order),
// with the error of a report the timer sent meanwhile, if any.
func (b *lateBusy) idleNow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = false
	b.request.clear()
	err := b.err
	b.err = nil
	return errors.Join(err, b.ch.send(protocol.Idle, 0, 0))
}

// sendText sends a message of type t carrying text (at most
// protocol.MaxText bytes).
func (c channel) sendText(t protocol.Type, text string) error {
	return c.write(protocol.Message{Type: t, Text: text})
}

// requestsAllowed reports whether the master speaks a revision with
// Request messages (ACTD_PROTOCOL).
func requestsAllowed() bool {
	v, err := strconv.Atoi(strings.TrimSpace(os.Getenv(protocol.EnvProtocol)))
	return err == nil && v >= protocol.Since(protocol.Request)
}
