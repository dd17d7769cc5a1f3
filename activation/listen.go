package activation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

// staleDialTimeout bounds the probe of an existing unix socket file.
const staleDialTimeout = time.Second

// Listen opens one listening socket per --listen value, in order, and
// returns them named as [ParseListen] says: "NAME=ADDR" is named NAME, a bare
// address gets [DefaultName] (see [ParseAddr] for the address forms).
//
// A unix socket file that already exists is removed first only if nothing
// listens on it (connect is refused); the socket file stays after the
// returned fd is closed, and the caller removes it when it is done.
//
// It returns an error naming the value when a name or an address is
// invalid, when a live process listens on a unix path, when a path exists
// and is not a socket, or when the socket cannot be opened; then it closes
// the sockets it had opened.
func Listen(addrs []string) ([]Socket, error) {
	return ListenMode(addrs, 0)
}

// ListenMode is [Listen] that gives every unix socket file it creates
// (not an abstract one) the permission bits mode, whatever the umask:
// 0o660 lets the file's group connect. Mode 0 leaves the umask's mode.
// The file never has more bits than mode, not even for a moment: it is
// created with mode less the umask's bits, which are added before the
// first connection can come (see listenUnix).
func ListenMode(addrs []string, mode fs.FileMode) ([]Socket, error) {
	if mode&^fs.ModePerm != 0 {
		return nil, fmt.Errorf("socket mode %#o: want permission bits only, such as 0660", uint32(mode))
	}
	socks := make([]Socket, 0, len(addrs))
	for _, value := range addrs {
		sock, err := listenValue(value, mode)
		if err != nil {
			_ = Close(socks)
			return nil, fmt.Errorf("listen on %q: %w", value, err)
		}
		socks = append(socks, sock)
	}
	return socks, nil
}

// listenValue opens the listener of one --listen value and names it.
func listenValue(value string, mode fs.FileMode) (Socket, error) {
	name, addr, err := ParseListen(value)
	if err != nil {
		return Socket{}, err
	}
	fd, err := listenOne(addr, mode)
	return Socket{Name: name, FD: fd}, err
}

// listenOne opens the listener for addr (a unix socket file with mode, see
// [ListenMode]) and hands back an owned fd.
func listenOne(addr string, mode fs.FileMode) (int, error) {
	network, address, err := ParseAddr(addr)
	if err != nil {
		return -1, err
	}
	if network == "unix" {
		if err := removeStale(address); err != nil {
			return -1, err
		}
	}
	if network != "unix" || address[0] == '@' || mode == 0 {
		ln, err := net.Listen(network, address)
		if err != nil {
			return -1, err
		}
		return takeListener(ln)
	}
	return listenUnix(address, mode)
}

// listenUnix listens on a unix socket file at path with permission bits
// mode. Linux creates the file at bind with the socket's own mode (set by
// fchmod on the unbound socket) less the umask, so it is never wider than
// mode; a chmod then adds what the umask took away. It returns the fd, or
// an error (the file is removed if the chmod fails).
func listenUnix(path string, mode fs.FileMode) (int, error) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = syscall.Fchmod(int(fd), uint32(mode)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	ln, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return -1, err
	}
	if err := os.Chmod(path, mode); err != nil {
		ln.Close() // a *net.UnixListener removes its file
		return -1, fmt.Errorf("socket mode: %w", err)
	}
	return takeListener(ln)
}

// takeListener duplicates the fd of ln and closes ln, so that the Go
// netpoller no longer watches the socket. A unix listener does not unlink
// its socket file on close.
//
// It returns the new fd, or the error of the duplication (ln is closed in
// every case).
func takeListener(ln net.Listener) (int, error) {
	defer ln.Close()
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("listener %T has no raw connection", ln)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	return dupRaw(rc)
}

// removeStale removes the unix socket file at path if nothing listens on it.
// Abstract addresses ("@name") have no file and are left alone.
//
// It returns nil if path does not exist or was stale and is now removed, and
// an error if a process accepts connections on it, if path is not a socket,
// or if it cannot be probed or removed.
func removeStale(path string) error {
	if path[0] == '@' {
		return nil
	}
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	conn, err := net.DialTimeout("unix", path, staleDialTimeout)
	if err == nil {
		conn.Close()
		return fmt.Errorf("another process is listening on %s", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("probe existing socket %s: %w", path, err)
	}
	return os.Remove(path)
}
