package prefork

import (
	"bytes"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
)

// TestHoldBody: under the http filter a request whose head is in is handed
// over only once its body is (Content-Length counted in the queue, a
// chunked body's end seen), or bound bytes of a larger one; the child gets
// the request from its first byte.
func TestHoldBody(t *testing.T) {
	const bound = 64 << 10
	big := strings.Repeat("b", 200<<10)
	for _, tc := range []struct {
		name   string
		parts  []string // sent one after the other; the last makes it ready
		bound  bool     // handed over at the bound
		counts int      // bodies held after all but the last part
	}{
		{"length", []string{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 50000\r\n\r\n",
			strings.Repeat("x", 30000), strings.Repeat("y", 20000)}, false, 1},
		{"chunked", []string{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
			"5\r\nhello\r\n", "9c40\r\n" + strings.Repeat("a", 40000) + "\r\n", "0\r\n", "\r\n"}, false, 1},
		{"chunked, a large chunk", []string{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
			"c000\r\n" + strings.Repeat("z", 0xc000) + "\r\n", "0\r\n\r\n"}, false, 1},
		{"length over the bound", []string{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 204800\r\n\r\n",
			big[:bound-1], big[:1]}, true, 1},
		{"chunked over the bound", []string{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
			"32000\r\n" + big[:bound-8], big[:1]}, true, 1},
		{"whole at once", []string{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, children, addr := handoffPool(t, 1, acceptfilter.HTTP)
			x := handoffOf(p)
			x.hold.bound = bound
			c, err := net.Dial("tcp", addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sent := 0
			for _, part := range tc.parts[:len(tc.parts)-1] {
				c.Write([]byte(part))
				sent += len(part)
				turns(t, p, func() bool { return p.stats.Handoffs > 0 || x.hold.bodies.now == 1 && queued(x) >= sent })
				if p.stats.Handoffs != 0 {
					t.Fatalf("after %d bytes: handed over, want held", sent)
				}
			}
			if x.hold.bodies.now != tc.counts {
				t.Errorf("bodies held: got %d, want %d", x.hold.bodies.now, tc.counts)
			}
			c.Write([]byte(tc.parts[len(tc.parts)-1]))
			turns(t, p, func() bool { return p.stats.Handoffs == 1 })
			conn, _ := handed(t, children[0])
			if x.hold.bodies.now != 0 || (x.hold.bodies.bound == 1) != tc.bound {
				t.Errorf("bodies held %d, at the bound %d; want 0, bound %v", x.hold.bodies.now, x.hold.bodies.bound, tc.bound)
			}
			head := make([]byte, len(tc.parts[0]))
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(conn, head); err != nil || !bytes.Equal(head, []byte(tc.parts[0])) {
				t.Errorf("child read %q (%v), want the request from its first byte", head, err)
			}
		})
	}
}

// queued returns the bytes the only held connection's last look saw.
func queued(x *handoffMode) int {
	for i := range x.hold.conns {
		if c := &x.hold.conns[i]; c.fd >= 0 {
			if c.body != nil {
				return max(c.body.queued, c.got)
			}
			return c.got
		}
	}
	return -1
}

// TestHoldBodyContinue: a request with Expect: 100-continue whose body has
// not begun is answered 100 Continue by the master, once; its body is then
// held as any other.
func TestHoldBodyContinue(t *testing.T) {
	p, children, addr := handoffPool(t, 1, acceptfilter.HTTP)
	x := handoffOf(p)
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const head = "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n"
	c.Write([]byte(head))
	turns(t, p, func() bool { return x.hold.bodies.continued == 1 })
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(response100))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, response100) {
		t.Fatalf("client read %q (%v), want %q", got, err, response100)
	}
	c.Write([]byte("01234"))
	turns(t, p, func() bool { return queued(x) == len(head)+5 })
	c.Write([]byte("56789"))
	turns(t, p, func() bool { return p.stats.Handoffs == 1 })
	handed(t, children[0])
	if x.hold.bodies.continued != 1 {
		t.Errorf("100 Continue sent %d times, want 1", x.hold.bodies.continued)
	}
}

// TestHoldBodyStalled: a body that stops coming is handed over after
// --hold-timeout (no 408: its head is in, a child waits on the rest as
// without the holder); one still coming is held past it.
func TestHoldBodyStalled(t *testing.T) {
	p, children, addr := handoffPool(t, 1, acceptfilter.HTTP)
	x := handoffOf(p)
	p.cfg.HoldTimeout = time.Second
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const head = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n"
	c.Write([]byte(head + "01"))
	turns(t, p, func() bool { return x.hold.bodies.now == 1 })
	p.now = p.now.Add(900 * time.Millisecond)
	c.Write([]byte("23"))
	turns(t, p, func() bool { return queued(x) == len(head)+4 })
	p.now = p.now.Add(900 * time.Millisecond) // 1.8s since accept, 0.9s since the last bytes
	x.expire()
	if x.hold.count != 1 || p.stats.Handoffs != 0 {
		t.Fatalf("with bytes 0.9s ago: held %d, handed %d; want 1, 0", x.hold.count, p.stats.Handoffs)
	}
	p.now = p.now.Add(200 * time.Millisecond)
	x.expire()
	if p.stats.Handoffs != 1 || x.hold.bodies.stalled != 1 || p.stats.HoldTimeouts != 0 {
		t.Fatalf("after the timeout: handed %d, stalled %d, timeouts %d; want 1, 1, 0",
			p.stats.Handoffs, x.hold.bodies.stalled, p.stats.HoldTimeouts)
	}
	handed(t, children[0])
}

// TestGrowRcvbuf: a held connection's receive buffer is raised so that the
// bytes wanted fit in its queue, as far as net.core.rmem_max lets it, and
// never lowered.
func TestGrowRcvbuf(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f, err := c.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rmemMax := readSysctl(t, "/proc/sys/net/core/rmem_max")
	for _, want := range []int{4 << 10, 1 << 20, 512 << 10} {
		got := growRcvbuf(int(f.Fd()), want)
		if floor := min(want, rmemMax); got/2 < floor {
			t.Errorf("want %d: got a buffer of %d, want at least twice %d", want, got, floor)
		}
	}
	if got := growRcvbuf(int(f.Fd()), 1); got/2 < min(1<<20, rmemMax) {
		t.Errorf("after a smaller want: got %d, want it not lowered", got)
	}
}

func readSysctl(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
