package activation

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoSockets is returned by [Sockets] when systemd passed no sockets and no
// listen address was given.
var ErrNoSockets = errors.New("activation: no sockets: LISTEN_FDS is unset and no listen address was given")

// Socket is one listening socket: a name and an fd the caller owns
// (close-on-exec set).
//
// Name is systemd's FileDescriptorName= (LISTEN_FDNAMES), "LISTEN_FD_<n>"
// when systemd gave no name, or the name [ParseListen] gives a --listen
// value. It always passes [CheckName], so that a child's LISTEN_FDNAMES
// ("name:name:...") splits into one name per fd.
type Socket struct {
	Name string
	FD   int
}

// Sockets returns the sockets from systemd if LISTEN_FDS is set for this
// process, else the sockets from [Listen] on addrs.
//
// It returns ErrNoSockets when LISTEN_FDS is unset (or meant for another
// process) and addrs is empty, and the error of [Systemd] or [Listen] when
// that fails.
func Sockets(addrs []string) ([]Socket, error) {
	socks, conns, err := SocketsWithStored(addrs, 0)
	CloseConns(conns)
	return socks, err
}

// SocketsWithStored is [Sockets] that also returns the connections systemd
// passed back from its fd store ([SystemdWithStored]); there are none with
// --listen addresses, whose unix socket files get the permission bits
// mode ([ListenMode]; 0: the umask's). systemd's sockets keep the mode
// their unit gave them (SocketMode=).
func SocketsWithStored(addrs []string, mode fs.FileMode) ([]Socket, []Conn, error) {
	socks, conns, err := SystemdWithStored()
	if err != nil || socks != nil {
		return socks, conns, err
	}
	CloseConns(conns) // stored connections without a listener: nothing can serve them
	if len(addrs) == 0 {
		return nil, nil, ErrNoSockets
	}
	socks, err = ListenMode(addrs, mode)
	return socks, nil, err
}

// Close closes the fds of socks and returns the first error.
func Close(socks []Socket) error {
	var first error
	for _, s := range socks {
		if err := unix.Close(s.FD); err != nil && first == nil {
			first = fmt.Errorf("close socket %s: %w", s.Name, err)
		}
	}
	return first
}

// dupRaw duplicates the fd behind rc with F_DUPFD_CLOEXEC, without changing
// its blocking mode (Control never touches it, unlike Fd).
//
// It returns the new fd, or the error of Control or fcntl.
func dupRaw(rc syscall.RawConn) (int, error) {
	newFD := -1
	var dupErr error
	err := rc.Control(func(fd uintptr) {
		newFD, dupErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, fmt.Errorf("fcntl F_DUPFD_CLOEXEC: %w", dupErr)
	}
	return newFD, nil
}

// checkStream returns nil if fd is a stream socket, or an error that says
// what it is instead.
func checkStream(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	switch {
	case errors.Is(err, unix.ENOTSOCK):
		return errors.New("not a socket")
	case err != nil:
		return fmt.Errorf("getsockopt SO_TYPE: %w", err)
	case typ != unix.SOCK_STREAM:
		return fmt.Errorf("socket type %d, not a stream socket", typ)
	}
	return nil
}

// checkListening returns nil if fd is a listening socket, or an error that
// says what it is instead.
func checkListening(fd int) error {
	on, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if errors.Is(err, unix.ENOTSOCK) {
		return errors.New("not a socket")
	}
	if err != nil {
		return fmt.Errorf("getsockopt SO_ACCEPTCONN: %w", err)
	}
	if on == 0 {
		return errors.New("not a listening socket (datagram socket, or Accept=yes?)")
	}
	return nil
}
