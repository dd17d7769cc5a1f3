package pooltest

import (
	"net"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// StartChild starts cmd as one child of a master the test plays: a
// loopback listener on fd 3 (LISTEN_FDS=1) and its back-channel's end on
// fd 4 (ACTD_CHANNEL_FD=4, ACTD_SLOT=0), put before cmd.Env's own
// entries (the last of a name wins); the caller sets the mode and
// revision. It returns the listener's address and the master's end of
// the channel, non-blocking (for read deadlines); the caller waits for
// cmd and closes the end in its own cleanup.
func StartChild(t *testing.T, cmd *exec.Cmd) (addr string, master *os.File) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lf, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	master, end := os.NewFile(uintptr(fds[0]), "master end"), os.NewFile(uintptr(fds[1]), "child end")
	defer end.Close()
	cmd.Env = append([]string{"LISTEN_FDS=1", "ACTD_CHANNEL_FD=4", "ACTD_SLOT=0"}, cmd.Env...)
	cmd.ExtraFiles = []*os.File{lf, end}
	if err := cmd.Start(); err != nil {
		master.Close()
		t.Fatal(err)
	}
	// Non-blocking, as the master leaves its listeners; after Start, which
	// makes the files it passes blocking.
	if err := unix.SetNonblock(int(lf.Fd()), true); err != nil {
		t.Fatal(err)
	}
	return l.Addr().String(), master
}
