package activation

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/internal/fdwait"
)

// ioTimeout bounds every wait in these tests so that a broken build fails
// instead of hanging; it is not an assertion on speed.
const ioTimeout = 30 * time.Second

// fdState is what the tests check about a socket fd.
type fdState struct {
	Listening bool
	Nonblock  bool
	Cloexec   bool
}

// inspectFD returns the state of fd, or an error if fd is not an open socket.
func inspectFD(fd int) (fdState, error) {
	acc, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err != nil {
		return fdState{}, fmt.Errorf("getsockopt SO_ACCEPTCONN on fd %d: %w", fd, err)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return fdState{}, fmt.Errorf("fcntl F_GETFL on fd %d: %w", fd, err)
	}
	fdfl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		return fdState{}, fmt.Errorf("fcntl F_GETFD on fd %d: %w", fd, err)
	}
	return fdState{
		Listening: acc == 1,
		Nonblock:  fl&unix.O_NONBLOCK != 0,
		Cloexec:   fdfl&unix.FD_CLOEXEC != 0,
	}, nil
}

// socketRefs counts the fds of this process that refer to the same socket as fd.
func socketRefs(t *testing.T, fd int) int {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatalf("fstat fd %d: %v", fd, err)
	}
	want := fmt.Sprintf("socket:[%d]", st.Ino)
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("read /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && target == want {
			n++
		}
	}
	return n
}

// openFDs counts the open fds of this process.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("read /proc/self/fd: %v", err)
	}
	return len(entries)
}

// localAddr returns the network and address fd is bound to, for dialing.
func localAddr(t *testing.T, fd int) (network, address string) {
	t.Helper()
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname fd %d: %v", fd, err)
	}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return "tcp", net.JoinHostPort(net.IP(sa.Addr[:]).String(), fmt.Sprint(sa.Port))
	case *unix.SockaddrInet6:
		return "tcp", net.JoinHostPort(net.IP(sa.Addr[:]).String(), fmt.Sprint(sa.Port))
	case *unix.SockaddrUnix:
		return "unix", sa.Name
	}
	t.Fatalf("fd %d: unexpected socket address %T", fd, sa)
	return "", ""
}

// acceptOne dials the socket behind fd, accepts the connection through fd
// itself and checks that bytes pass from the dialer to the accepted side.
func acceptOne(t *testing.T, fd int) {
	t.Helper()
	network, address := localAddr(t, fd)
	conn, err := net.DialTimeout(network, address, ioTimeout)
	if err != nil {
		t.Fatalf("dial %s %s: %v", network, address, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatalf("write: %v", err)
	}
	if ok, err := fdwait.Readable(fd, ioTimeout); !ok || err != nil {
		t.Fatalf("poll listener fd %d: got readable %v, %v; want true, nil", fd, ok, err)
	}
	nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
	if err != nil {
		t.Fatalf("accept4 on fd %d: %v", fd, err)
	}
	defer unix.Close(nfd)
	buf := make([]byte, 8)
	n, err := unix.Read(nfd, buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read accepted conn: got %q, %v; want \"ping\", nil", buf[:n], err)
	}
}

// checkOwnedListener checks everything the package promises about fd.
func checkOwnedListener(t *testing.T, fd int) {
	t.Helper()
	st, err := inspectFD(fd)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Listening || !st.Cloexec {
		t.Fatalf("fd %d: got %+v, want listening and close-on-exec", fd, st)
	}
	if n := socketRefs(t, fd); n != 1 {
		t.Fatalf("fd %d: got %d fds on the socket, want 1 (the original was not closed)", fd, n)
	}
}
