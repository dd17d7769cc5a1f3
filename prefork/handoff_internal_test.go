package prefork

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// handoffPool is a pool of n idle children in the master's bookkeeping,
// with real back-channels (the child ends are returned), under filter f, on
// a real TCP listener whose address is returned.
func handoffPool(t *testing.T, n int, f acceptfilter.Filter) (*Pool, []int, net.Addr) {
	t.Helper()
	p := &Pool{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler), changed: make(chan struct{}, 1),
		gens: generations{ready: &readiness{ch: make(chan struct{})}}, now: time.Now()}
	p.cfg.Filter, p.cfg.MaxChildren = f, max(n, 1)
	p.mode, _ = newMode(p, protocol.Dispatch)
	x, ok := p.mode.(*handoffMode)
	if !ok {
		t.Fatalf("filter %v in dispatch mode: got %T, want a handoffMode", f, p.mode)
	}
	p.table = p.mode.table()
	p.launcher = newLauncher(p, nil)
	p.mem = memory{cfg: &p.cfg, log: p.log}
	for i := range n {
		s := &slot{num: i, pidfd: -1, ch: -1, helloAt: p.now, state: idle, since: p.now, caps: protocol.CapHandoff}
		p.slots = append(p.slots, s)
		p.idle.add(i)
		x.screen.hello(s) // children that take only what is handed over
	}
	poll, err := newPoller()
	if err != nil {
		t.Fatal(err)
	}
	p.poll = poll
	t.Cleanup(poll.close)
	children := backChannels(t, p)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f2, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f2.Close() })
	l, err := newListener(Listener{Name: "test", FD: int(f2.Fd())}, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	p.listeners = []*listener{l}
	if err := p.mode.setup(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := range handoffOf(p).hold.conns {
			if handoffOf(p).hold.conns[i].fd >= 0 {
				handoffOf(p).close(i)
			}
		}
	})
	return p, children, ln.Addr()
}

// connFD returns one end of a connected stream socketpair, closed with the
// test unless the code under test took it.
func connFD(t *testing.T) int {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pair[1]) })
	return pair[0]
}

// turns runs the loop's event handling until cond holds, for 5s at most.
func turns(t *testing.T, p *Pool, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		events, err := p.poll.wait(time.Now().Add(20 * time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		p.now = time.Now()
		for _, ev := range events {
			p.handle(ev)
		}
	}
}

// handed reads the message waiting at child end fd: a C, whose connection
// it returns as a net.Conn and listener.
func handed(t *testing.T, fd int) (net.Conn, int) {
	t.Helper()
	var buf [protocol.MaxPacket]byte
	n, cfd, err := protocol.RecvFD(fd, buf[:])
	if err != nil {
		t.Fatalf("read child end: %v", err)
	}
	m, err := protocol.Decode(buf[:n])
	if err != nil || m.Type != protocol.Conn || cfd < 0 {
		t.Fatalf("got %+v (fd %d, %v), want a C with a descriptor", m, cfd, err)
	}
	f := os.NewFile(uintptr(cfd), "handed")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, int(m.Listener)
}

// TestHandoffWhenReady: a connection goes to the lowest idle child only
// once its request head is complete, as the very socket the client wrote
// to, with nothing of it read; the slot is then ordered.
func TestHandoffWhenReady(t *testing.T) {
	p, children, addr := handoffPool(t, 2, acceptfilter.HTTP)
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\nHost: a\r\n"))
	turns(t, p, func() bool { return handoffOf(p).hold.count == 1 && handoffOf(p).hold.conns[0].got > 0 })
	if got := received(t, children[0]); len(got) != 0 {
		t.Fatalf("before the head is complete: child got %q, want nothing", got)
	}
	c.Write([]byte("\r\n"))
	turns(t, p, func() bool { return handoffOf(p).hold.count == 0 })
	conn, l := handed(t, children[0])
	if l != 0 || p.slots[0].state != ordered || p.stats.Handoffs != 1 {
		t.Errorf("got listener %d, slot 0 %v, handoffs %d; want 0, ordered, 1", l, p.slots[0].state, p.stats.Handoffs)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if line != "GET / HTTP/1.1\r\n" {
		t.Errorf("child read %q (%v), want the request line", line, err)
	}
	conn.Write([]byte("answer\n"))
	if got, _ := bufio.NewReader(c).ReadString('\n'); got != "answer\n" {
		t.Errorf("client read %q, want %q", got, "answer\n")
	}
}

// TestHoldTimeout: a held connection not ready within HoldTimeout is closed:
// with the http filter after a 408 if part of a request came, quietly if
// nothing came.
func TestHoldTimeout(t *testing.T) {
	for _, tc := range []struct {
		filter acceptfilter.Filter
		send   string
		want   string
	}{
		{acceptfilter.HTTP, "GET / HTTP/1.1\r\nHost", "HTTP/1.1 408 Request Timeout\r\n"},
		{acceptfilter.HTTP, "", ""},
		{acceptfilter.Data, "", ""},
	} {
		t.Run(tc.filter.String()+"/"+map[bool]string{true: "partial", false: "silent"}[tc.send != ""], func(t *testing.T) {
			p, _, addr := handoffPool(t, 1, tc.filter)
			p.cfg.HoldTimeout = time.Second
			c, err := net.Dial("tcp", addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte(tc.send))
			turns(t, p, func() bool { return handoffOf(p).hold.count == 1 && handoffOf(p).hold.conns[0].got == len(tc.send) })
			p.now = p.now.Add(999 * time.Millisecond)
			handoffOf(p).expire()
			if handoffOf(p).hold.count != 1 {
				t.Fatalf("before the timeout: held %d, want 1", handoffOf(p).hold.count)
			}
			p.now = p.now.Add(2 * time.Millisecond)
			handoffOf(p).expire()
			if handoffOf(p).hold.count != 0 || p.stats.HoldTimeouts != 1 {
				t.Fatalf("after the timeout: held %d, timeouts %d; want 0, 1", handoffOf(p).hold.count, p.stats.HoldTimeouts)
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(c)
			if !strings.HasPrefix(string(got), tc.want) || tc.want == "" && len(got) > 0 {
				t.Errorf("client read %q (%v), want %q first", got, err, tc.want)
			}
		})
	}
}

// TestMaxHeld: at MaxHeld the master sheds the oldest connection that is
// not ready (here: after 408, as part of a request came) to take the next
// one: a new client is always accepted, the listener stays watched, and
// the shed one is counted.
func TestMaxHeld(t *testing.T) {
	p, _, addr := handoffPool(t, 1, acceptfilter.HTTP)
	p.cfg.MaxHeld = 2
	var conns []net.Conn
	for i := range 3 {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("GET /part HTTP/1.1\r\n")) // part of a head: held, not ready
		conns = append(conns, c)
		turns(t, p, func() bool { return p.stats.Held == uint64(i+1) })
	}
	if x := handoffOf(p); x.hold.count != 2 || p.stats.Shed != 1 || x.full || !p.listeners[0].armed {
		t.Errorf("held %d, shed %d, full %v, watching %v; want 2, 1, false, true", x.hold.count, p.stats.Shed, x.full, p.listeners[0].armed)
	}
	conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, _ := io.ReadAll(conns[0]); !strings.HasPrefix(string(got), "HTTP/1.1 408 ") {
		t.Errorf("the oldest read %q, want a 408 (shed)", got)
	}
}

// TestShedOrder: the holder sheds the oldest fresh connection that is not
// ready, then the oldest parked one, never a ready one.
func TestShedOrder(t *testing.T) {
	t0 := time.Now()
	tests := []struct {
		name  string
		conns []struct{ parked, ready bool }
		want  int
	}{
		{"none", nil, -1},
		{"oldest fresh", []struct{ parked, ready bool }{{false, false}, {false, false}}, 0},
		{"fresh before an older parked", []struct{ parked, ready bool }{{true, false}, {false, false}}, 1},
		{"parked when no fresh", []struct{ parked, ready bool }{{true, false}, {true, false}}, 0},
		{"never a ready one", []struct{ parked, ready bool }{{false, true}, {true, false}}, 1},
		{"all ready", []struct{ parked, ready bool }{{false, true}, {true, true}}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHolder(acceptfilter.HTTP, 0)
			for i, c := range tc.conns {
				j := h.add(100+i, 0, t0.Add(time.Duration(i)*time.Second), c.parked)
				if c.ready {
					h.markReady(j)
				}
			}
			if got := h.shed(); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// TestParkAndHandAgain: a connection a child gives back (K) is held until
// its next request is in, then handed to the lowest idle child, which may
// be another one; the client's connection is the same.
func TestParkAndHandAgain(t *testing.T) {
	p, children, addr := handoffPool(t, 2, acceptfilter.HTTP)
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET /1 HTTP/1.1\r\n\r\n"))
	turns(t, p, func() bool { return p.stats.Handoffs == 1 })
	conn, _ := handed(t, children[0])
	s := p.slots[0]
	if err := p.onMessage(s, protocol.Message{Type: protocol.Busy}); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(conn).ReadString('\n'); line != "GET /1 HTTP/1.1\r\n" {
		t.Fatalf("slot 0 read %q, want the first request", line)
	}
	conn.Write([]byte("one\n"))
	// The pool owns what it is given: hand it a copy, so that raw's
	// finalizer does not close the same number again later (another test's
	// descriptor by then).
	raw, _ := conn.(*net.TCPConn).File()
	given, err := unix.Dup(int(raw.Fd()))
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.onMessageFD(s, protocol.Message{Type: protocol.Keep}, given); err != nil {
		t.Fatalf("K from busy: %v", err)
	}
	conn.Close()
	p.slots[1].state = idle // slot 0 stays busy: the next request goes to slot 1
	p.idle.remove(0)
	if handoffOf(p).hold.parked != 1 || p.stats.Parked != 1 {
		t.Fatalf("parked %d, stats %d; want 1, 1", handoffOf(p).hold.parked, p.stats.Parked)
	}
	if got, _ := bufio.NewReader(c).ReadString('\n'); got != "one\n" {
		t.Fatalf("first answer %q, want %q", got, "one\n")
	}
	c.Write([]byte("GET /2 HTTP/1.1\r\n\r\n"))
	turns(t, p, func() bool { return p.stats.Handoffs == 2 })
	conn2, _ := handed(t, children[1])
	if line, _ := bufio.NewReader(conn2).ReadString('\n'); line != "GET /2 HTTP/1.1\r\n" {
		t.Errorf("slot 1 read %q, want the second request", line)
	}
}

// TestNoIdleChildLeavesQueued: with no idle child the master accepts
// nothing (a connection would only wait in the master, and die with it):
// it stops watching the listener, counts an overload, and the connection
// waits in the kernel's queue, the scaler's demand, until a child reports
// idle and gets it.
func TestNoIdleChildLeavesQueued(t *testing.T) {
	p, children, addr := handoffPool(t, 1, acceptfilter.HTTP)
	s := p.slots[0]
	s.state = busy
	p.idle.remove(0)
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	turns(t, p, func() bool { return handoffOf(p).starved })
	p.measureQueues()
	if got := p.poolState().Queued; got != 1 || p.stats.Overloads != 1 || handoffOf(p).hold.count != 0 || p.listeners[0].armed {
		t.Errorf("queued %d, overloads %d, held %d, listener watched %v; want 1, 1, 0, false",
			got, p.stats.Overloads, handoffOf(p).hold.count, p.listeners[0].armed)
	}
	if err := p.onMessage(s, protocol.Message{Type: protocol.Idle}); err != nil {
		t.Fatal(err)
	}
	turns(t, p, func() bool { return p.stats.Handoffs == 1 })
	if handoffOf(p).hold.count != 0 || s.state != ordered {
		t.Fatalf("after the I: held %d, slot %v; want 0, ordered", handoffOf(p).hold.count, s.state)
	}
	handed(t, children[0])
}

// handoffOf returns p's accept mode, a handoffMode (handoffPool checks).
func handoffOf(p *Pool) *handoffMode { return p.mode.(*handoffMode) }

// TestParkWhileStopping: a connection given back while the pool stops goes
// to an idle child if its next request is in and the children have not
// been told to drain; otherwise it is closed, as an idle keep-alive
// connection or one no child will take.
func TestParkWhileStopping(t *testing.T) {
	for _, tc := range []struct {
		name      string
		next      string
		drained   bool
		wantGiven bool
	}{
		{"idle", "", false, false},
		{"request in", "GET /2 HTTP/1.1\r\n\r\n", false, true},
		{"request in, drained", "GET /2 HTTP/1.1\r\n\r\n", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, _ := handoffPool(t, 2, acceptfilter.HTTP)
			p.stop = &stopping{deadline: p.now.Add(time.Minute), drained: tc.drained}
			s := p.slots[0]
			s.state = busy
			p.idle.remove(0)
			pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(pair[1])
			unix.Write(pair[1], []byte(tc.next + "x")[:len(tc.next)])
			if err := p.onMessageFD(s, protocol.Message{Type: protocol.Keep}, pair[0]); err != nil {
				t.Fatalf("K: %v", err)
			}
			if given := p.stats.Handoffs == 1; given != tc.wantGiven || handoffOf(p).hold.count != 0 {
				t.Errorf("handed over: %v, still held %d; want %v, 0", given, handoffOf(p).hold.count, tc.wantGiven)
			}
			if !tc.wantGiven {
				var b [1]byte
				n, _, err := unix.Recvfrom(pair[1], b[:], unix.MSG_DONTWAIT)
				if err == nil && n != 0 || err != nil && err != unix.ECONNRESET { // a reset: the unread request
					t.Errorf("client end read %d, %v; want EOF or a reset (closed)", n, err)
				}
			}
		})
	}
}

// TestClientCloseWhileHeld: a client that closes (or half-closes) its side
// after part of a request is closed at once, not held until its hold
// timeout (a peek still shows its bytes, so only the event's hang-up
// tells); one that sends the rest of its request with the half-close is
// handed over.
func TestClientCloseWhileHeld(t *testing.T) {
	const part = "GET / HTTP/1.1\r\nHost: a\r\n"
	for _, tc := range []struct {
		name, rest string
		half       bool // CloseWrite, else Close
		handed     bool
	}{
		{"part, closed", "", false, false},
		{"part, half-closed", "", true, false},
		{"rest, half-closed", "\r\n", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, addr := handoffPool(t, 1, acceptfilter.HTTP)
			c, err := net.Dial("tcp", addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte(part))
			turns(t, p, func() bool { h := handoffOf(p).hold; return h.count == 1 && h.conns[0].got == len(part) })
			c.Write([]byte(tc.rest))
			if tc.half {
				c.(*net.TCPConn).CloseWrite()
			} else {
				c.Close()
			}
			turns(t, p, func() bool { return handoffOf(p).hold.count == 0 })
			if got := p.stats.Handoffs == 1; got != tc.handed || p.stats.HeldClosed != uint64(1-boolInt(tc.handed)) {
				t.Errorf("handed over %v, held closed %d; want %v, %d", got, p.stats.HeldClosed, tc.handed, 1-boolInt(tc.handed))
			}
		})
	}
}
