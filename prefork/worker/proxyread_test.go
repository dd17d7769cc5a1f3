package worker

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"
)

// readsHeaderScreener returns a screening child's side for a handler
// that reads the header with its first request (ReadsHeader), trusting
// 127.0.0.1 on listener 0, keep as its KeepFDHandler's, and the master's
// end of its back-channel.
func readsHeaderScreener(t *testing.T, keep keepServer) (*screener, int) {
	t.Helper()
	trusted, err := proxyproto.ParseEnv("0=127.0.0.1/32", 1)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pair[0]); unix.Close(pair[1]) })
	// The connection in hand is the package's: a test that leaves one
	// would name its client in a later test's reports.
	t.Cleanup(func() { setClientAddr(-1, netip.AddrPort{}); forgetOwed() })
	sc := &screener{env: Env{Revision: proxySince, Proxy: trusted, readsHeader: true}, ch: channel(pair[0]),
		filter: acceptfilter.HTTP, peek: make([]byte, acceptfilter.HeadLimit), keep: keep}
	return sc, pair[1]
}

// acceptSent connects a client to a listener, sends sent, and returns the
// connection the child accepts (the segment in by then) and the client.
func acceptSent(t *testing.T, sent string) (int, interface{ Write([]byte) (int, error) }) {
	t.Helper()
	lfd, client := listenedPair(t, "tcp4")
	t.Cleanup(func() { client.Close() })
	if _, err := client.Write([]byte(sent)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the segment is in
	fd, err := acceptOne(lfd)
	if err != nil || fd < 0 {
		t.Fatalf("accept: %d, %v", fd, err)
	}
	return fd, client
}

// kept reads the master's end of the back-channel for a Keep, and returns
// it and its fd.
func kept(t *testing.T, master int) (protocol.Message, int) {
	t.Helper()
	buf := make([]byte, 512)
	n, kfd, err := protocol.RecvFD(master, buf)
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.Decode(buf[:n])
	if err != nil || m.Type != protocol.Keep {
		t.Fatalf("to the master: %+v, %v; want Keep", m, err)
	}
	t.Cleanup(func() { unix.Close(kfd) })
	return m, kfd
}

// socketHolds reports what connection fd still holds, without reading it.
func socketHolds(fd int) string {
	buf := make([]byte, 512)
	n, _, _ := unix.Recvfrom(fd, buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return string(buf[:max(n, 0)])
}

const (
	readV1  = "PROXY TCP4 203.0.113.7 192.0.2.1 5555 80\r\n"
	readGet = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
)

// TestHeaderWithRequest: for a handler that reads the header with its
// first request, a header and a whole request in one segment are served
// with the header left in the socket, and one ReadPastHeader takes both
// and gives the request alone; the bytes a later read finds are the
// socket's as they come (the next request on the connection).
func TestHeaderWithRequest(t *testing.T) {
	sc, _ := readsHeaderScreener(t, func(int) bool { return false })
	fd, client := acceptSent(t, readV1+readGet)
	defer unix.Close(fd)
	tv := unix.NsecToTimeval((5 * time.Second).Nanoseconds()) // a read that waits fails, not hangs
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	ready, err := sc.look(fd, 0)
	if err != nil || !ready {
		t.Fatalf("look: %v, %v; want ready", ready, err)
	}
	if got := clientOf(fd); got != "203.0.113.7:5555" {
		t.Errorf("client %q, want 203.0.113.7:5555", got)
	}
	if got := string(Peeked(fd)); got != readGet {
		t.Errorf("Peeked %q, want the request alone", got)
	}
	if got := socketHolds(fd); got != readV1+readGet {
		t.Fatalf("the socket holds %q, want the header still in it", got)
	}
	buf := make([]byte, len(readGet))
	if n, err := ReadPastHeader(fd, buf); err != nil || string(buf[:n]) != readGet {
		t.Fatalf("ReadPastHeader: %q, %v; want the request", buf[:max(n, 0)], err)
	}
	if got := socketHolds(fd); got != "" {
		t.Errorf("the socket still holds %q", got)
	}
	client.Write([]byte(readGet)) // a next request: no header before it
	time.Sleep(20 * time.Millisecond)
	if n, err := ReadPastHeader(fd, buf); err != nil || string(buf[:n]) != readGet {
		t.Fatalf("the next request: %q, %v; want it whole", buf[:max(n, 0)], err)
	}
}

// TestHeaderWithRequestNotReady: for the same handler, a connection that
// goes to the master (a request partial, or none yet) goes with its header
// read and its address, the request's bytes left in the socket; so does a
// connection the handler gives back without reading anything.
func TestHeaderWithRequestNotReady(t *testing.T) {
	for _, tc := range []struct {
		name, sent, left string
	}{
		{"header and part of a request", readV1 + readGet[:10], readGet[:10]},
		{"header alone", readV1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, master := readsHeaderScreener(t, func(int) bool { t.Error("served"); return false })
			fd, _ := acceptSent(t, tc.sent)
			if ready, err := sc.look(fd, 0); err != nil || ready {
				t.Fatalf("look: %v, %v; want given to the master", ready, err)
			}
			m, kfd := kept(t, master)
			if m.Value != protocol.NotReady || m.Addr != "203.0.113.7:5555" {
				t.Errorf("Keep %+v, want NotReady with 203.0.113.7:5555", m)
			}
			if got := socketHolds(kfd); got != tc.left {
				t.Errorf("the socket holds %q, want %q", got, tc.left)
			}
		})
	}
	t.Run("given back unread", func(t *testing.T) {
		sc, master := readsHeaderScreener(t, func(int) bool { return true })
		fd, _ := acceptSent(t, readV1+readGet)
		if ready, err := sc.look(fd, 0); err != nil || !ready {
			t.Fatalf("look: %v, %v; want ready", ready, err)
		}
		if err := sc.serve(fd, 0); err != nil {
			t.Fatal(err)
		}
		m, kfd := kept(t, master)
		if m.Value != 0 || m.Addr != "203.0.113.7:5555" {
			t.Errorf("Keep %+v, want value 0 with 203.0.113.7:5555", m)
		}
		if got := socketHolds(kfd); got != readGet {
			t.Errorf("the socket holds %q, want the request without the header", got)
		}
	})
}

// TestHeaderReadFirst: a handler that did not opt in gets the connection
// with its header read, as before.
func TestHeaderReadFirst(t *testing.T) {
	sc, _ := readsHeaderScreener(t, func(int) bool { return false })
	sc.env.readsHeader = false
	fd, _ := acceptSent(t, readV1+readGet)
	defer unix.Close(fd)
	if ready, err := sc.look(fd, 0); err != nil || !ready {
		t.Fatalf("look: %v, %v; want ready", ready, err)
	}
	if got := socketHolds(fd); got != readGet {
		t.Errorf("the socket holds %q, want the request alone", got)
	}
	if !strings.Contains(clientOf(fd), "203.0.113.7") {
		t.Errorf("client %q, want the header's", clientOf(fd))
	}
}
