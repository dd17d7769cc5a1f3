package worker

import (
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"
)

// TestAcceptedPeer: the peer of a connection the child accepted is the
// one accept4 gave, known to RemoteAddrPort, RemoteAddr and the PROXY
// trust check even once getpeername can no longer tell it (the client
// reset the connection); a connection handed over forgets it, and a unix
// socket's peer has none.
func TestAcceptedPeer(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6", "unix"} {
		t.Run(network, func(t *testing.T) {
			lfd, client := listenedPair(t, network)
			defer client.Close()
			fd, err := acceptOne(lfd)
			if err != nil || fd < 0 {
				t.Fatalf("accept: %d, %v", fd, err)
			}
			defer unix.Close(fd)
			want, _ := netip.ParseAddrPort(client.LocalAddr().String())
			if network == "unix" {
				want = netip.AddrPort{}
			}
			resetByClient(t, client, fd)
			if network != "unix" {
				if _, err := unix.Getpeername(fd); err == nil {
					t.Fatal("getpeername still works after the reset: the test proves nothing")
				}
			}
			if got := RemoteAddrPort(fd); got != want {
				t.Errorf("RemoteAddrPort %v, want %v", got, want)
			}
			if a, ok := RemoteAddr(fd).(*net.TCPAddr); ok != want.IsValid() || ok && a.AddrPort() != want {
				t.Errorf("RemoteAddr %v, want %v", RemoteAddr(fd), want)
			}
			trusted, _ := proxyproto.ParseEnv("0=127.0.0.0/8 0=::1/128", 1)
			if got := (Env{Revision: proxySince, Proxy: trusted}).trusted(fd, 0); got != want.IsValid() {
				t.Errorf("trusted %v, want %v", got, want.IsValid())
			}
			forgetPeer() // as a connection handed over does
			if got := RemoteAddrPort(fd); got.IsValid() {
				t.Errorf("after forgetPeer: RemoteAddrPort %v from a reset socket, want none", got)
			}
		})
	}
}

// TestScreenOnePeek: a screening child's one peek serves the PROXY header
// and the readiness rule: a header and a whole request in one segment are
// served, the header read and the request left in the socket, which
// Peeked shows the handler until the next connection; a header
// alone, or with part of a request, goes to the master with the header's
// address, the header read; a header's beginning goes unread, without
// an address; a malformed one closes the connection.
func TestScreenOnePeek(t *testing.T) {
	trusted, err := proxyproto.ParseEnv("0=127.0.0.1/32", 1)
	if err != nil {
		t.Fatal(err)
	}
	const v1 = "PROXY TCP4 203.0.113.7 192.0.2.1 5555 80\r\n"
	const get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	const post = "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
	for _, tc := range []struct {
		name  string
		sent  string
		ready bool
		kept  bool   // given to the master (Keep, NotReady)
		addr  string // the Keep's address, or the client's when ready
		left  string // what the socket still holds
		span  int    // PeekedSpan when ready: the first request's bytes
	}{
		{"header and request", v1 + get, true, false, "203.0.113.7:5555", get, len(get)},
		{"header, a body, the next's start", v1 + post + "GET", true, false, "203.0.113.7:5555", post + "GET", len(post)},
		{"header and a bad length", v1 + "POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", true, false, "203.0.113.7:5555", "POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 0},
		{"header alone", v1, false, true, "203.0.113.7:5555", "", 0},
		{"header and part", v1 + get[:10], false, true, "203.0.113.7:5555", get[:10], 0},
		{"header's beginning", v1[:12], false, true, "", v1[:12], 0},
		{"malformed", "PROXY TCP4 x\r\n" + get, false, false, "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lfd, client := listenedPair(t, "tcp4")
			defer client.Close()
			pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(pair[0])
			defer unix.Close(pair[1])
			sc := &screener{env: Env{Revision: proxySince, Proxy: trusted}, ch: channel(pair[0]),
				filter: acceptfilter.HTTP, peek: make([]byte, acceptfilter.HeadLimit)}
			if _, err := client.Write([]byte(tc.sent)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // the segment is in
			fd, err := acceptOne(lfd)
			if err != nil || fd < 0 {
				t.Fatalf("accept: %d, %v", fd, err)
			}
			ready, err := sc.look(fd, 0)
			if err != nil || ready != tc.ready {
				t.Fatalf("look: %v, %v; want %v", ready, err, tc.ready)
			}
			if ready {
				defer unix.Close(fd)
				if got := clientOf(fd); got != tc.addr {
					t.Errorf("client %q, want %q", got, tc.addr)
				}
				if got := string(Peeked(fd)); got != tc.left {
					t.Errorf("Peeked %q, want %q", got, tc.left)
				}
				if got := PeekedSpan(fd); got != tc.span {
					t.Errorf("PeekedSpan %d, want %d", got, tc.span)
				}
				forgetPeer() // as a connection handed over next does
				if got, span := Peeked(fd), PeekedSpan(fd); got != nil || span != 0 {
					t.Errorf("Peeked after a hand-over %q, %d, want nil, 0", got, span)
				}
			}
			if tc.kept {
				buf := make([]byte, 512)
				n, kfd, err := protocol.RecvFD(pair[1], buf)
				if err != nil {
					t.Fatal(err)
				}
				m, err := protocol.Decode(buf[:n])
				if err != nil || m.Type != protocol.Keep || m.Value != protocol.NotReady || m.Addr != tc.addr {
					t.Fatalf("to the master: %+v, %v; want Keep, NotReady, %q", m, err, tc.addr)
				}
				fd = kfd
				defer unix.Close(fd)
			}
			if !ready && !tc.kept {
				if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
					t.Errorf("fd %d still open", fd)
				}
				return
			}
			buf := make([]byte, 200)
			n, _, _ := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			if got := string(buf[:max(n, 0)]); got != tc.left {
				t.Errorf("left %q, want %q", got, tc.left)
			}
		})
	}
}

// listenedPair returns a listening socket's fd, non-blocking as a child's
// listeners are, on loopback (or a unix socket), with one client connected
// to it. It skips when the network is not there (no IPv6).
func listenedPair(t *testing.T, network string) (int, net.Conn) {
	t.Helper()
	addr := map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0", "unix": t.TempDir() + "/s"}[network]
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s listener here: %v", network, err)
	}
	defer ln.Close()
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.SetNonblock(int(f.Fd()), true); err != nil {
		t.Fatal(err)
	}
	client, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return int(f.Fd()), client
}

// resetByClient ends a TCP connection with a reset from the client's
// side (SO_LINGER 0) and waits until the server's socket fd has seen it.
func resetByClient(t *testing.T, client net.Conn, fd int) {
	t.Helper()
	tc, ok := client.(*net.TCPConn)
	if !ok {
		return
	}
	tc.SetLinger(0)
	tc.Close()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if _, err := unix.Poll(fds, 2000); err != nil && err != syscall.EINTR {
		t.Fatal(err)
	}
}
