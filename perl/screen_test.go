package perl_test

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"
)

// Requests the screening tests send: whole (ready under both filters),
// and a head cut before its empty line (ready under data only).
const (
	closeRequest     = "GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
	keepAliveRequest = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"
	partialHead      = "GET /hello HTTP/1.1\r\nHost: t\r\n"
	headEnd          = "Connection: close\r\n\r\n"
)

// notReady is how receiveFD writes a connection given to the master as not
// ready: K from listener 0, value protocol.NotReady, its fd attached.
var notReady = fmt.Sprintf("K0/%d+fd", protocol.NotReady)

// TestScreenReady: Actd::Screen::ready, the handler's readiness rule, and
// the Go library's (acceptfilter.Whole: the head rule and the body rule)
// give the same answer as the table, the
// one in docs/protocol.md ("The readiness rule"): a change to one that
// forgets the other fails here.
func TestScreenReady(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skipf("perl needed (Debian package perl): %v", err)
	}
	limit := acceptfilter.HeadLimit
	for _, tc := range []struct {
		name   string
		filter acceptfilter.Filter
		head   string
		want   bool
	}{
		{"http nothing", acceptfilter.HTTP, "", false},
		{"http request line", acceptfilter.HTTP, "GET / HTTP/1.1\r\n", false},
		{"http head without its end", acceptfilter.HTTP, partialHead, false},
		{"http head and CR", acceptfilter.HTTP, partialHead + "\r", false},
		{"http CRLF CRLF", acceptfilter.HTTP, keepAliveRequest, true},
		{"http LF LF (a bare LF: a fault, answered)", acceptfilter.HTTP, "GET / HTTP/1.0\n\n", true},
		{"http CRLFs before the request line", acceptfilter.HTTP, "\r\n\r\n", false},
		{"http a bad request line", acceptfilter.HTTP, "GET /\r\n", true},
		{"http a bare CR", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: a\rb", true},
		{"http a control byte", acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost: \x01", true},
		{"http a request line too long", acceptfilter.HTTP, "GET /" + strings.Repeat("a", acceptfilter.LineLimit) + " HTTP/1.1\r\n", true},
		{"http head and body", acceptfilter.HTTP, "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", true},
		{"http one byte short of the limit", acceptfilter.HTTP, "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", limit-20), false},
		{"http at the limit", acceptfilter.HTTP, strings.Repeat("a", limit), true},
		{"http body not whole", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nab", false},
		{"http body and the next request", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nabGET", true},
		{"http body with a bare LF", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\na\nb\x01", true},
		{"http body not whole, a bare LF in it", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\na\nb", false},
		{"http length twice", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\n", true},
		{"http length not digits", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\n", true},
		{"http length spaced", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:  3 \r\n\r\nab", false},
		{"http chunked whole", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n2;x=y\r\nab\r\n0\r\nT: v\r\n\r\n", true},
		{"http chunked without its end", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n", false},
		{"http chunked, a large chunk", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nab", false},
		{"http chunked, size over 2^63", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\n", true},
		{"http chunked, bad size", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true},
		{"http chunked, data without CRLF", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc", true},
		{"http chunked in HTTP/1.0", acceptfilter.HTTP, "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"http gzip, chunked", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", true},
		{"http a control byte in the head", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nX: \x01\r\nContent-Length: 5\r\n\r\n", true},
		{"http body beyond the peek", acceptfilter.HTTP, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 40000\r\n\r\n" + strings.Repeat("b", limit-47), false},
		{"data nothing", acceptfilter.Data, "", false},
		{"data one byte", acceptfilter.Data, "G", true},
		{"data head without its end", acceptfilter.Data, partialHead, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.filter.Whole([]byte(tc.head)); got != tc.want {
				t.Errorf("acceptfilter %v Whole: got %v, want %v", tc.filter, got, tc.want)
			}
			cmd := exec.Command("perl", "-Ilib", "-MActd::Screen", "-e",
				`print Actd::Screen::ready($ARGV[0], pack "H*", $ARGV[1]) ? "ready" : "not ready"`,
				tc.filter.String(), hex.EncodeToString([]byte(tc.head)))
			out, err := cmd.CombinedOutput()
			want := map[bool]string{true: "ready", false: "not ready"}[tc.want]
			if got := string(out); err != nil || got != want {
				t.Errorf("Actd::Screen::ready: got %q, %v, want %q", got, err, want)
			}
		})
	}
}

// TestScreen: under a revision-4 master with an accept filter, the handler
// announces handoff and screen and takes the children-first path of
// docs/protocol.md. The test plays the master over the child's
// back-channel (a real SOCK_SEQPACKET pair, a real TCP listener): a
// connection handed over before the go-ahead is served; after the go-ahead
// (A) the child accepts by itself, serves a ready request without any C,
// gives a silent connection and a partial head to the master (K with the
// fd and the value protocol.NotReady, and nothing else), gives back a
// keep-alive connection it accepted itself once it idles (K), closes one
// whose client is gone, all in one spell (B ... I, S); the
// fds given back are the clients' connections, served when handed over
// again (C); a second A registers again.
func TestScreen(t *testing.T) {
	needPlack(t)
	w := startWorkerWith(t, "H5", "ACTD_PROTOCOL=4", "ACTD_ACCEPT_FILTER=http") // handoff | screen

	client, server := tcpPair(t)
	write(t, client, closeRequest)
	w.hand(t, server)
	w.expect(t, "B0 I")
	readHello(t, client)

	ready := dialSend(t, w.addr, closeRequest)
	silent := dialSend(t, w.addr, "")
	partial := dialSend(t, w.addr, partialHead)
	kept := dialSend(t, w.addr, keepAliveRequest)
	gone := dialSend(t, w.addr, "")
	gone.(*net.TCPConn).CloseWrite()
	pooltest.WaitArrived(t, ready, silent, partial, kept, gone) // every request in before the child looks

	// One spell (docs/perl.md): B for the first, the others taken behind
	// it without a B each, the ones not ready given to the master as
	// they come, then I and S for the one served after the first.
	w.send(t, protocol.Message{Type: protocol.Accept})
	back := w.expect(t, "I B0 "+notReady+" "+notReady+" K0+fd I S1")
	readHello(t, ready)
	readHello(t, kept)
	if n, err := gone.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("client gone: got %d bytes, %v, want end of file (the child closed it)", n, err)
	}
	w.send(t, protocol.Message{Type: protocol.Ping, Value: 7})
	w.expect(t, "O") // nothing for the client gone

	for i, c := range []struct {
		conn net.Conn
		rest string
	}{{silent, closeRequest}, {partial, headEnd}, {kept, closeRequest}} {
		write(t, c.conn, c.rest)
		w.hand(t, back[i])
		w.expect(t, "B0 I")
		readHello(t, c.conn)
	}

	w.send(t, protocol.Message{Type: protocol.Accept}) // register again
	w.expect(t, "I")
	late := dialSend(t, w.addr, "")
	w.expect(t, notReady)
	late.Close()
}

// TestScreenData: under the data filter, a head without its end is ready
// (a byte came): the child serves it, and the rest of the head may follow;
// a silent connection goes to the master.
func TestScreenData(t *testing.T) {
	needPlack(t)
	w := startWorkerWith(t, "H5", "ACTD_PROTOCOL=4", "ACTD_ACCEPT_FILTER=data")
	partial := dialSend(t, w.addr, partialHead)
	silent := dialSend(t, w.addr, "")
	defer silent.Close()
	pooltest.WaitArrived(t, partial, silent) // both in before the child looks
	w.send(t, protocol.Message{Type: protocol.Accept})
	w.expect(t, "I B0")
	write(t, partial, headEnd)
	readHello(t, partial)
	w.expect(t, notReady+" I") // taken behind the first, in its spell
}

// TestScreenNotAnnounced: the handler keeps the master-first path (H with
// handoff only) wherever docs/protocol.md says a worker must: a master of
// revision 3 with a filter, no filter, exclusive mode.
func TestScreenNotAnnounced(t *testing.T) {
	needPlack(t)
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"revision 3", []string{"ACTD_PROTOCOL=3", "ACTD_ACCEPT_FILTER=http"}},
		{"no filter", []string{"ACTD_PROTOCOL=4"}},
		{"filter none", []string{"ACTD_PROTOCOL=4", "ACTD_ACCEPT_FILTER=none"}},
		{"exclusive mode", []string{"ACTD_PROTOCOL=4", "ACTD_ACCEPT_FILTER=http", "ACTD_ACCEPT_MODE=exclusive"}},
	} {
		t.Run(tc.name, func(t *testing.T) { startWorkerWith(t, "H1", tc.env...) })
	}
}

// expect reads the child's messages, leaving out request reports (R,
// best effort), until it has as many as want (space-separated, as
// receive writes them), and fails the test unless they are want. It
// returns the file descriptors that came with them, in order.
func (w *worker) expect(t *testing.T, want string) []*os.File {
	t.Helper()
	var got []string
	var fds []*os.File
	for len(got) < len(strings.Fields(want)) {
		m, f, err := w.receiveFD()
		if err != nil {
			t.Fatalf("messages: got %q, then %v, want %q", strings.Join(got, " "), err, want)
		}
		if f != nil {
			fds = append(fds, f)
			t.Cleanup(func() { f.Close() })
		}
		if !strings.HasPrefix(m, "R(") {
			got = append(got, m)
		}
	}
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("messages: got %q, want %q", s, want)
	}
	return fds
}

// hand sends the child conn (C, listener 0), as the master hands over a
// connection it held, and closes the test's copy.
func (w *worker) hand(t *testing.T, conn *os.File) {
	t.Helper()
	defer conn.Close()
	raw, err := w.channel.SyscallConn() // not Fd(), which would end the channel's deadlines
	if err != nil {
		t.Fatal(err)
	}
	var sendErr error
	err = raw.Write(func(s uintptr) bool {
		sendErr = protocol.SendFD(int(s), protocol.Message{Type: protocol.Conn}, int(conn.Fd()))
		return true
	})
	if err = errors.Join(err, sendErr); err != nil {
		t.Fatal(err)
	}
}

// tcpPair returns the two ends of a loopback TCP connection: the client's,
// and the server's as a file, for hand.
func tcpPair(t *testing.T) (net.Conn, *os.File) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client := dialSend(t, l.Addr().String(), "")
	conn, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	f, err := conn.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	return client, f
}

// dialSend connects to addr and sends request (nothing if empty); the
// connection is closed at cleanup.
func dialSend(t *testing.T, addr, request string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, ioBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(ioBound))
	write(t, conn, request)
	return conn
}

// write sends s on conn.
func write(t *testing.T, conn net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(conn, s); err != nil {
		t.Fatal(err)
	}
}

// readHello reads one answer to GET /hello from conn.
func readHello(t *testing.T, conn net.Conn) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET /hello: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !pidRE.Match(body) {
		t.Fatalf("GET /hello: got %d %q, %v, want 200 hello pid=N", resp.StatusCode, body, err)
	}
}

// TestScreenPool runs the handler under a real actd master with
// --accept-filter http, where its children screen (revision 4): requests
// sent at once are served by the children without the master holding
// them (a few may be, when a child looks before the request's bytes are
// in: at most a quarter is allowed; a child that did not screen, or found
// ready requests not ready, would have the master hold every one); a
// client that connects, waits, then sends is held by the master, then
// handed over and served; silent connections do not pin a child.
func TestScreenPool(t *testing.T) {
	p := startPool(t, "dispatch", "app.psgi", "--accept-filter", "http", "--start-children", "2",
		"--min-children", "2", "--max-children", "2", "--hold-timeout", "60s")
	const n = 40
	before, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		readHello(t, dialSend(t, p.addr, closeRequest))
	}
	s, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	held, handed := s.Pool.Stats.Held-before.Pool.Stats.Held, s.Pool.Stats.Handoffs-before.Pool.Stats.Handoffs
	t.Logf("%d requests sent at once: the master held %d, handed over %d", n, held, handed)
	if held > n/4 || handed > n/4 || s.Pool.Stats.Served < n {
		t.Errorf("%d requests sent at once: the master held %d, handed over %d, children served %d; want at most %d held, all served",
			n, held, handed, s.Pool.Stats.Served, n/4)
	}

	t.Run("waits, then sends", func(t *testing.T) {
		before, err := p.Held()
		if err != nil {
			t.Fatal(err)
		}
		conn := dialSend(t, p.addr, partialHead)
		if _, err := p.WaitHeld(func(d statusDoc) bool {
			return d.Pool.Held.Held == 1 && d.Pool.Stats.Held > before.Pool.Stats.Held && d.Pool.Idle == 2
		}); err != nil {
			t.Fatalf("want the connection held by the master, both children idle: %v", err)
		}
		write(t, conn, headEnd)
		readHello(t, conn)
		if s, err := p.Held(); err != nil || s.Pool.Stats.Handoffs <= before.Pool.Stats.Handoffs {
			t.Errorf("got handoffs %d before, then %+v, %v; want one more", before.Pool.Stats.Handoffs, s.Pool.Stats, err)
		}
	})

	t.Run("silent", func(t *testing.T) {
		const silent = 6
		for range silent {
			dialSend(t, p.addr, "")
		}
		if _, err := p.WaitHeld(func(d statusDoc) bool { return d.Pool.Held.Held >= silent && d.Pool.Idle == 2 }); err != nil {
			t.Fatalf("want %d silent connections held by the master, both children idle: %v", silent, err)
		}
		for range 4 {
			readHello(t, dialSend(t, p.addr, closeRequest))
		}
	})
	if c := p.complaints(); len(c) > 0 {
		t.Errorf("actd's log: got %q, want no warning", c)
	}
}

// TestScreenPoolRevision3: the handler told of revision 3 (a worker
// command that sets ACTD_PROTOCOL=3, as a handler of before revision 4
// reads it) announces handoff only, and under --accept-filter http the
// master holds and hands over every connection, all served: the
// master-first path stays for such workers.
func TestScreenPoolRevision3(t *testing.T) {
	p := startPoolWith(t, []string{"env", "ACTD_PROTOCOL=3"}, "dispatch", "app.psgi", "--accept-filter", "http",
		"--start-children", "2", "--min-children", "2", "--max-children", "2", "--hold-timeout", "60s")
	const n = 10
	for range n {
		readHello(t, dialSend(t, p.addr, closeRequest))
	}
	s, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Pool.Stats; st.Held != n || st.Handoffs != n || st.Served != n {
		t.Errorf("%d requests: the master held %d, handed over %d, children served %d; want %d each", n, st.Held, st.Handoffs, st.Served, n)
	}
}
