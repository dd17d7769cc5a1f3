package worker

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// TestYielder: a yielder yields when yieldEvery has passed since its last
// yield, and not before. Fake clock.
func TestYielder(t *testing.T) {
	tests := []struct {
		name  string
		calls []time.Duration // the clock at each call
		want  int             // yields
	}{
		{"at the start", []time.Duration{0, time.Millisecond}, 0},
		{"once due", []time.Duration{yieldEvery}, 1},
		{"not twice in a period", []time.Duration{yieldEvery, yieldEvery + 1, 2*yieldEvery - 1}, 1},
		{"again a period later", []time.Duration{yieldEvery, 2 * yieldEvery, 2*yieldEvery + 1, 3 * yieldEvery}, 3},
		{"after a long wait", []time.Duration{time.Second, time.Second + time.Millisecond}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var clock time.Duration
			got := 0
			y := &yielder{now: func() time.Duration { return clock }, yield: func() { got++ }}
			for _, at := range tt.calls {
				clock = at
				y.due()
			}
			if got != tt.want {
				t.Errorf("got %d yields, want %d", got, tt.want)
			}
		})
	}
}

// countingYielder returns a yielder that is always due and counts its
// yields.
func countingYielder() (*yielder, *atomic.Int32) {
	var clock atomic.Int64
	var n atomic.Int32
	y := &yielder{
		now:   func() time.Duration { return time.Duration(clock.Add(int64(yieldEvery))) },
		yield: func() { n.Add(1) },
	}
	return y, &n
}

// TestConnYieldsAfterWait: a conn's read that waited in ppoll for the
// peer's bytes passes through the scheduler when due; one that found the
// bytes there does not. Real TCP sockets.
func TestConnYieldsAfterWait(t *testing.T) {
	tests := []struct {
		name    string
		early   bool // the peer writes before the read
		atLeast int32
		atMost  int32
	}{
		{"bytes there", true, 0, 0},
		{"read waits", false, 1, 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer := acceptedPair(t, "tcp")
			defer peer.Close()
			defer c.Close()
			y, n := countingYielder()
			c.yields = y
			if tt.early {
				peer.Write([]byte("x"))
				waitUntil(t, func() bool { return readable(c.fd) })
			} else {
				go func() {
					waitUntil(t, func() bool { return c.read.waiting.Load() })
					peer.Write([]byte("x"))
				}()
			}
			if _, err := c.Read(make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			if got := n.Load(); got < tt.atLeast || got > tt.atMost {
				t.Errorf("got %d yields, want %d to %d", got, tt.atLeast, tt.atMost)
			}
		})
	}
}

// TestServeYields: the protocol loop passes through the scheduler before
// it serves a connection, when due, for every kind of handler. Shared mode
// (no back-channel), a real listener.
func TestServeYields(t *testing.T) {
	tests := []struct {
		name  string
		serve func(ctx context.Context, env Env, served chan<- struct{}) error
	}{
		{"Handler", func(ctx context.Context, env Env, served chan<- struct{}) error {
			return ServeEnv(ctx, env, func(net.Conn) { served <- struct{}{} })
		}},
		{"FDHandler", func(ctx context.Context, env Env, served chan<- struct{}) error {
			return serveEnv(ctx, env, FDHandler(func(int) { served <- struct{}{} }).server())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, n := countingYielder()
			old := yields
			yields = y
			defer func() { yields = old }()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			f, err := ln.(*net.TCPListener).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			env := Env{Mode: protocol.Shared, Listeners: []int{int(f.Fd())}, Channel: -1, Slot: -1}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan struct{}, 1)
			done := make(chan error, 1)
			go func() { done <- tt.serve(ctx, env, served) }()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			select {
			case <-served:
			case <-time.After(10 * time.Second):
				t.Fatal("connection not served within 10s")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := n.Load(); got != 1 {
				t.Errorf("got %d yields, want 1 (before the connection)", got)
			}
		})
	}
}

// readable reports whether fd has bytes to read now.
func readable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1
}

// TestHandedYields: a connection the master hands over (C) is served after
// a pass through the scheduler, when due, by a KeepFDHandler too. Dispatch
// mode, a real back-channel played by the test.
func TestHandedYields(t *testing.T) {
	y, n := countingYielder()
	old := yields
	yields = y
	defer func() { yields = old }()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[1])
	handed, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(handed[0])
	defer unix.Close(handed[1])
	env := Env{Mode: protocol.Dispatch, Listeners: []int{handed[1]}, Channel: pair[0], Slot: 0}
	h := KeepFDHandler(func(int, bool) bool { return false })
	done := make(chan error, 1)
	go func() { done <- serveEnvKeep(context.Background(), env, h.server(), h.keeper()) }()
	master := channel(pair[1])
	for _, want := range []protocol.Type{protocol.Hello, protocol.Idle} {
		if m, err := master.recv2(); err != nil || m.Type != want {
			t.Fatalf("got %+v, %v; want %v", m, err, want)
		}
	}
	if err := protocol.SendFD(pair[1], protocol.Message{Type: protocol.Conn}, handed[0]); err != nil {
		t.Fatal(err)
	}
	for _, want := range []protocol.Type{protocol.Busy, protocol.Idle} {
		if m, err := master.recv2(); err != nil || m.Type != want {
			t.Fatalf("got %+v, %v; want %v", m, err, want)
		}
	}
	unix.Shutdown(pair[1], unix.SHUT_RDWR) // the master's end: EOF
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	unix.Close(pair[0])
	if got := n.Load(); got != 1 {
		t.Errorf("got %d yields, want 1 (before the connection)", got)
	}
}

// TestYield: Yield passes through the scheduler when the child's yielder
// is due.
func TestYield(t *testing.T) {
	y, n := countingYielder()
	old := yields
	yields = y
	defer func() { yields = old }()
	Yield()
	if got := n.Load(); got != 1 {
		t.Errorf("got %d yields, want 1", got)
	}
}
