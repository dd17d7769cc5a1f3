package notify

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// readTimeout bounds every read from the fake socket so that a broken build
// fails instead of hanging; it is not an assertion on speed.
const readTimeout = 10 * time.Second

// fakeSystemd is a unixgram socket standing in for systemd's NOTIFY_SOCKET.
type fakeSystemd struct {
	conn *net.UnixConn
}

// listenNotify binds a fake NOTIFY_SOCKET at addr (a path, or @name) and
// points NOTIFY_SOCKET at it for the rest of the test.
func listenNotify(t *testing.T, addr string) *fakeSystemd {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen on fake NOTIFY_SOCKET %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", addr)
	return &fakeSystemd{conn: conn}
}

// newFakeSystemd is listenNotify on a path in t.TempDir.
func newFakeSystemd(t *testing.T) *fakeSystemd {
	t.Helper()
	return listenNotify(t, filepath.Join(t.TempDir(), "notify.sock"))
}

// next returns the next datagram.
func (f *fakeSystemd) next(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 4096)
	f.conn.SetReadDeadline(time.Now().Add(readTimeout))
	n, err := f.conn.Read(buf)
	if err != nil {
		t.Fatalf("read fake NOTIFY_SOCKET: %v", err)
	}
	return string(buf[:n])
}

// none fails the test if a datagram is waiting. It asks the socket
// itself (recv with MSG_DONTWAIT): a read with a deadline already past
// would return before looking.
func (f *fakeSystemd) none(t *testing.T) {
	t.Helper()
	rc, err := f.conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, rerr := 0, error(nil)
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rerr, unix.EAGAIN) {
		t.Fatalf("got datagram %q, %v; want none", buf[:max(n, 0)], rerr)
	}
}
