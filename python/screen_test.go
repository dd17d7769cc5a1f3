package python_test

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/actd/actd/prefork/acceptfilter"
)

// screenCases is the children's rule's table (docs/protocol.md, "The
// readiness rule" and "The body rule"; docs/http.md, "What ends a head"),
// which acceptfilter.Whole and the adapter's actd.screen.ready must both
// keep.
var screenCases = []struct {
	name   string
	filter acceptfilter.Filter
	head   string
	want   bool
}{
	{"http nothing", acceptfilter.HTTP, "", false},
	{"http request line", acceptfilter.HTTP, "GET / HTTP/1.1\r\n", false},
	{"http head without its end", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: t\r\n", false},
	{"http head and CR", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: t\r\n\r", false},
	{"http CRLF CRLF", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: t\r\n\r\n", true},
	{"http LF LF (a bare LF: a fault, answered)", acceptfilter.HTTP, "GET / HTTP/1.0\n\n", true},
	{"http a bare LF first", acceptfilter.HTTP, "\nGET", true},
	{"http CRLFs before the request line", acceptfilter.HTTP, "\r\n\r\n", false},
	{"http CRLFs, then a head", acceptfilter.HTTP, "\r\n\r\nGET / HTTP/1.1\r\n\r\n", true},
	{"http a bad request line", acceptfilter.HTTP, "GET /\r\n", true},
	{"http a bad method", acceptfilter.HTTP, "G(T / HTTP/1.1\r\n", true},
	{"http a bad version", acceptfilter.HTTP, "GET / HTTP/11\r\n", true},
	{"http HTTP/2.0: a request line, 505 once the head ends", acceptfilter.HTTP, "GET / HTTP/2.0\r\n", false},
	{"http a bare CR", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: a\rb", true},
	{"http a control byte", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: \x01", true},
	{"http DEL", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: \x7f", true},
	{"http HTAB", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost:\ta", false},
	{"http a target of 8-bit bytes", acceptfilter.HTTP, "GET /\xc3\xa9 HTTP/1.1\r\n", false},
	{"http a request line too long", acceptfilter.HTTP, "GET /" + strings.Repeat("a", acceptfilter.LineLimit) + " HTTP/1.1\r\n", true},
	{"http a request line at the limit", acceptfilter.HTTP, "GET /" + strings.Repeat("a", acceptfilter.LineLimit-14) + " HTTP/1.1\r\n", false},
	{"http an unended line too long", acceptfilter.HTTP, strings.Repeat("a", acceptfilter.LineLimit+2), true},
	{"http an unended line at the limit", acceptfilter.HTTP, strings.Repeat("a", acceptfilter.LineLimit+1), false},
	{"http head and body", acceptfilter.HTTP, "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", true},
	{"http one byte short of the limit", acceptfilter.HTTP, "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", acceptfilter.HeadLimit-20), false},
	{"http at the limit", acceptfilter.HTTP, strings.Repeat("a", acceptfilter.HeadLimit), true},
	{"http a body not all in", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nab", false},
	{"http a body, names in any case", acceptfilter.HTTP, "POST / HTTP/1.1\r\ncontent-LENGTH:  3 \r\n\r\nab", false},
	{"http Content-Length 0", acceptfilter.HTTP, "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", true},
	{"http two lengths (answered 400)", acceptfilter.HTTP, "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", true},
	{"http a bad length (answered 400)", acceptfilter.HTTP, "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", true},
	{"http a chunked body whole", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nab\r\n0\r\n\r\n", true},
	{"http a chunked body and trailers whole", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nab\r\n0\r\nX: y\r\n\r\n", true},
	{"http a chunked body not ended", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n", false},
	{"http a chunk not all in", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nab", false},
	{"http a bad chunk size (answered 400)", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true},
	{"http chunk data without its CRLF", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", true},
	{"http a bare LF in a trailer", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX\n", true},
	{"http chunked in HTTP/1.0 (answered 400)", acceptfilter.HTTP, "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", true},
	{"http chunked and a length (answered 400)", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", true},
	{"http another coding (answered 501)", acceptfilter.HTTP, "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", true},
	{"data nothing", acceptfilter.Data, "", false},
	{"data one byte", acceptfilter.Data, "G", true},
	{"data head without its end", acceptfilter.Data, "GET / HTTP/1.1\r\n", true},
}

// TestScreenReady: actd.screen.ready, the adapter's readiness rule, and
// the Go one (acceptfilter.Whole, the master's Ready and the body rule)
// give the table's answer for every case: a change to one that forgets
// the other fails here. One python3
// reads every case (filter and hex head, a line each) and answers a line
// each.
func TestScreenReady(t *testing.T) {
	py := python(t)
	var in strings.Builder
	for _, tc := range screenCases {
		fmt.Fprintf(&in, "%s %s\n", tc.filter, hex.EncodeToString([]byte(tc.head)))
	}
	cmd := exec.Command(py, "-c", `import sys
from actd.screen import ready
for line in sys.stdin:
    filter, _, head = line.rstrip("\n").partition(" ")
    print("ready" if ready(filter, bytes.fromhex(head)) else "not ready")`)
	cmd.Env = append(os.Environ(), "PYTHONPATH=.", "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	answers := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(answers) != len(screenCases) {
		t.Fatalf("python3: got %d answers, want %d:\n%s", len(answers), len(screenCases), out)
	}
	for i, tc := range screenCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.filter.Whole([]byte(tc.head)); got != tc.want {
				t.Errorf("acceptfilter %v Whole: got %v, want %v", tc.filter, got, tc.want)
			}
			want := map[bool]string{true: "ready", false: "not ready"}[tc.want]
			if answers[i] != want {
				t.Errorf("actd.screen.ready: got %q, want %q", answers[i], want)
			}
		})
	}
}

// TestChildrenFirst runs the adapter under --accept-filter http with a
// master of protocol revision 4, where it announces screen: the children
// accept by themselves and give the master only what is not ready.
// Requests sent at once are served with no handoff (C) at all; a client
// that connects and waits before it sends is held by the master and handed
// over; silent connections are held, not left in a child.
func TestChildrenFirst(t *testing.T) {
	py := python(t)
	p := startPool(t, "dispatch", []string{py, "-m", "actd.wsgi", "validated:app"}, filterFlags...)
	t.Run("ready: no handoff", func(t *testing.T) { checkNoHandoff(t, p) })
	t.Run("waits, then sends", func(t *testing.T) { checkWaitsThenSends(t, p) })
	t.Run("silent connections pin no child", func(t *testing.T) { checkSilentHeld(t, p) })
	t.Run("idle keep-alive given back", func(t *testing.T) { checkGivenBack(t, p) })
	if s, err := p.Held(); err != nil || s.Pool.Stats.Garbage != 0 {
		t.Errorf("stats: got %+v, %v; want no garbage", s.Pool.Stats, err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// checkNoHandoff: requests sent as soon as the connection is up (the
// listener defers each connection until its bytes are in, TCP_DEFER_ACCEPT)
// are served by the children with no handoff, and the children count them.
func checkNoHandoff(t *testing.T, p *pool) {
	before, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	checkConcurrent(t, p) // 200 connections, 8 at a time
	after, err := p.WaitHeld(func(d statusDoc) bool {
		return d.Pool.Stats.Served >= before.Pool.Stats.Served+200
	})
	if err != nil {
		t.Fatalf("want 200 more connections served: %v", err)
	}
	b, a := before.Pool.Stats, after.Pool.Stats
	if a.Held != b.Held || a.Handoffs != b.Handoffs {
		t.Errorf("held, handed over: got %d, %d more; want none: the children serve ready connections",
			a.Held-b.Held, a.Handoffs-b.Handoffs)
	}
}

// checkWaitsThenSends: a client that connects and sends nothing until the
// master holds its connection (a child accepted it once the listener's
// TCP_DEFER_ACCEPT ran out, and gave it up: K, not ready) is served once it
// sends, by a handoff.
func checkWaitsThenSends(t *testing.T, p *pool) {
	before, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := dial(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := p.WaitHeld(func(d statusDoc) bool { return d.Pool.Held.Held-d.Pool.Held.Parked >= 1 }); err != nil {
		t.Fatalf("want the silent connection held by the master: %v", err)
	}
	fmt.Fprint(conn, "GET /echo?late HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	got, err := readAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	checkBodies(t, got, []string{"GET /echo late "})
	s, err := p.Held()
	b, a := before.Pool.Stats, s.Pool.Stats
	if err != nil || a.Held != b.Held+1 || a.Handoffs != b.Handoffs+1 {
		t.Errorf("held, handed over: got %d, %d more (%v); want 1, 1", a.Held-b.Held, a.Handoffs-b.Handoffs, err)
	}
}

// checkSilentHeld: more silent and half-sent connections than children are
// all held by the master, both children stay idle, and a good client is
// served meanwhile.
func checkSilentHeld(t *testing.T, p *pool) {
	const silent, slow = 4, 4
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := range silent + slow {
		c, err := dial(p.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		idle = append(idle, c)
		if i >= silent {
			fmt.Fprintf(c, "GET /echo?slow%d HTTP/1.1\r\nHost: x\r\n", i)
		}
	}
	_, err := p.WaitHeld(func(d statusDoc) bool { return d.Pool.Held.Held >= silent+slow && d.Pool.Idle == 2 })
	if err != nil {
		t.Fatalf("want %d connections held and both children idle: %v", silent+slow, err)
	}
	got, err := exchange(p.addr, "GET /echo?good HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	checkBodies(t, got, []string{"GET /echo good "})
}
