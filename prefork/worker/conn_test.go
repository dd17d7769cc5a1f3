package worker

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestConn: the net.Conn handed to handlers behaves as the net package's
// own, as net/http relies on: a read past its deadline is a net.Error whose
// Timeout() is true, the peer's close is io.EOF, a read after Close wraps
// net.ErrClosed, CloseWrite ends the peer's reads, addresses have the
// socket's type (asked while connected), TCP_NODELAY is set. Real TCP and unix sockets.
func TestConn(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			c, peer := acceptedPair(t, network)
			defer peer.Close()

			wantAddr := map[string]string{"tcp": "*net.TCPAddr", "unix": "*net.UnixAddr"}[network]
			if got := typeName(c.LocalAddr()); got != wantAddr {
				t.Errorf("LocalAddr: got %s, want %s", got, wantAddr)
			}
			if network == "tcp" {
				if got := typeName(c.RemoteAddr()); got != wantAddr {
					t.Errorf("RemoteAddr: got %s, want %s", got, wantAddr)
				}
				if v, err := unix.GetsockoptInt(c.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY); err != nil || v == 0 {
					t.Errorf("TCP_NODELAY: got %d, %v; want it set", v, err)
				}
			}

			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("read past the deadline: got %v, want a net.Error with Timeout()", err)
			}
			c.SetReadDeadline(time.Time{})

			if err := c.CloseWrite(); err != nil {
				t.Errorf("CloseWrite: got %v, want nil", err)
			}
			if n, err := peer.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("peer's read after CloseWrite: got %d, %v; want 0, EOF", n, err)
			}

			peer.Write([]byte("x"))
			peer.Close()
			buf := make([]byte, 4)
			if n, err := c.Read(buf); n != 1 || err != nil {
				t.Errorf("read: got %d, %v; want 1, nil", n, err)
			}
			if _, err := c.Read(buf); err != io.EOF {
				t.Errorf("read after the peer's close: got %v, want io.EOF", err)
			}

			if err := c.Close(); err != nil {
				t.Errorf("Close: got %v, want nil", err)
			}
			if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) {
				t.Errorf("read after Close: got %v, want net.ErrClosed", err)
			}
		})
	}
}

// TestConnTellsClose: a Listener's conn says it was closed exactly once,
// however often it is closed.
func TestConnTellsClose(t *testing.T) {
	closed := make(chan struct{}, 2)
	c, peer := acceptedPair(t, "tcp")
	defer peer.Close()
	c.closed = closed
	c.Close()
	c.Close()
	if got := len(closed); got != 1 {
		t.Errorf("closed twice: got %d signals, want 1", got)
	}
}

// acceptedPair returns a conn made by newConn of a socket accepted with
// accept4, as the worker makes it, and the client's end.
func acceptedPair(t *testing.T, network string) (*conn, net.Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return acceptedFrom(t, ln)
}

// acceptedFrom returns a conn made by newConn of a socket accepted from ln
// with accept4, as the worker makes it, and the client's end.
func acceptedFrom(t *testing.T, ln net.Listener) (*conn, net.Conn) {
	t.Helper()
	peer, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(interface{ File() (*os.File, error) }).File() // a duplicate of the listener
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := acceptOne(int(f.Fd()))
	if err != nil || fd < 0 {
		t.Fatalf("accept: got %d, %v", fd, err)
	}
	c := newConn(fd, newWakers(), nil)
	if c == nil {
		t.Fatal("newConn: nil")
	}
	return c, peer
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// TestConnWaitEnds: a Read or Write that waits is ended from another
// goroutine, as net/http ends its background read after each request: by
// a deadline set in the past (a timeout), by Close (net.ErrClosed), or by
// its own deadline passing. Real TCP sockets.
func TestConnWaitEnds(t *testing.T) {
	big := make([]byte, 64<<20) // more than the socket buffers hold: the write waits
	tests := []struct {
		name    string
		call    func(c *conn) error
		end     func(c *conn)
		timeout bool // else closed
	}{
		{"read, deadline set", func(c *conn) error { _, err := c.Read(make([]byte, 1)); return err },
			func(c *conn) { c.SetReadDeadline(time.Unix(1, 0)) }, true},
		{"read, closed", func(c *conn) error { _, err := c.Read(make([]byte, 1)); return err },
			func(c *conn) { c.Close() }, false},
		{"read, own deadline", func(c *conn) error {
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			_, err := c.Read(make([]byte, 1))
			return err
		}, func(*conn) {}, true},
		{"write, deadline set", func(c *conn) error { _, err := c.Write(big); return err },
			func(c *conn) { c.SetWriteDeadline(time.Unix(1, 0)) }, true},
		{"write, closed", func(c *conn) error { _, err := c.Write(big); return err },
			func(c *conn) { c.Close() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer := acceptedPair(t, "tcp")
			defer peer.Close()
			defer c.Close()
			result := make(chan error, 1)
			go func() { result <- tt.call(c) }()
			// A call with its own short deadline may have ended already.
			waitUntil(t, func() bool { return c.read.waiting.Load() || c.write.waiting.Load() || len(result) > 0 })
			tt.end(c)
			var err error
			select {
			case err = <-result:
			case <-time.After(10 * time.Second):
				t.Fatal("the call still waits 10s after it was ended")
			}
			var ne net.Error
			switch {
			case tt.timeout && !(errors.As(err, &ne) && ne.Timeout()):
				t.Errorf("got %v, want a timeout", err)
			case !tt.timeout && !errors.Is(err, net.ErrClosed):
				t.Errorf("got %v, want net.ErrClosed", err)
			}
		})
	}
}

// waitUntil polls cond for at most 10s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("condition not met within 10s")
		}
	}
}

// TestConnWaitsFirst: a Read right after a Write waits in ppoll before it
// reads (the peer is likely still to answer), unless the read before it
// filled its buffer (a stream); other reads try recv first. Counted by the
// conn's yielder, which every ppoll calls; the peer's bytes are there
// before each read, so a read that tries first never waits. Real TCP
// sockets.
func TestConnWaitsFirst(t *testing.T) {
	tests := []struct {
		name  string
		steps string // r: a read of 8 bytes, R: of 1 byte (fills it), w: a write
		polls int32  // of the last read
	}{
		{"a first read", "r", 0},
		{"a read after a read", "rr", 0},
		{"a read after a write", "rwr", 1},
		{"a read after a write, twice", "rwrwr", 1},
		{"a read after a write, the read before filled", "Rwr", 0},
		{"a write without a read after it", "rwwr", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer := acceptedPair(t, "tcp")
			defer peer.Close()
			defer c.Close()
			go io.Copy(io.Discard, peer)
			y, n := countingYielder()
			c.yields = y
			for i, step := range tt.steps {
				if step == 'w' {
					if _, err := c.Write([]byte("answer")); err != nil {
						t.Fatal(err)
					}
					continue
				}
				peer.Write([]byte("xy"))
				waitUntil(t, func() bool { return readable(c.fd) })
				n.Store(0)
				size := map[rune]int{'r': 8, 'R': 1}[step]
				if _, err := c.Read(make([]byte, size)); err != nil {
					t.Fatal(err)
				}
				if got := n.Load(); i == len(tt.steps)-1 && got != tt.polls {
					t.Errorf("got %d polls, want %d", got, tt.polls)
				}
			}
		})
	}
}
