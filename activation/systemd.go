package activation

import (
	"fmt"
	"os"

	sdactivation "github.com/coreos/go-systemd/v22/activation"
	"golang.org/x/sys/unix"
)

// Systemd returns the sockets systemd passed to this process, in activation
// order, named by LISTEN_FDNAMES. Connections passed back from systemd's fd
// store (see [SystemdWithStored]) are closed.
//
// It reads LISTEN_FDS through go-systemd's activation.Files(true), which
// checks that LISTEN_PID is this process and unsets LISTEN_PID, LISTEN_FDS
// and LISTEN_FDNAMES. Each fd is duplicated with close-on-exec set and the
// original fd (3, 4, ...) is closed, so that fds 3 and up are free again.
//
// It returns nil, nil when LISTEN_FDS is unset, not a positive number, or
// LISTEN_PID names another process. It returns an error naming the socket
// when its name fails [CheckName] (actd hands the names on to its children,
// whose libsystemd would reject them), when a passed fd is not a listening
// socket (nor a stored connection) or cannot be duplicated; then it closes
// every fd it was given.
func Systemd() ([]Socket, error) {
	socks, conns, err := SystemdWithStored()
	CloseConns(conns)
	return socks, err
}

// SystemdWithStored is [Systemd] that also returns the connections systemd
// passed back from its fd store: fds that are connected stream sockets
// named by a [StoredName], in the order systemd passed them. A listening
// socket is a listener whatever its name.
//
// It returns nil, nil, nil when LISTEN_FDS is unset (as Systemd), and on an
// error closes every fd it was given.
func SystemdWithStored() ([]Socket, []Conn, error) {
	files := sdactivation.Files(true)
	if len(files) == 0 {
		return nil, nil, nil
	}
	var socks []Socket
	var conns []Conn
	for i, f := range files {
		sock, err := takeNamed(f)
		var conn Conn
		isConn := false
		if err == nil {
			if conn, isConn, err = storedConn(sock); err != nil {
				unix.Close(sock.FD)
			}
		}
		if err != nil {
			closeFiles(files[i+1:])
			_ = Close(socks)
			CloseConns(conns)
			return nil, nil, fmt.Errorf("systemd socket %d (%s): %w", i, f.Name(), err)
		}
		if isConn {
			conns = append(conns, conn)
		} else {
			socks = append(socks, sock)
		}
	}
	return socks, conns, nil
}

// CloseConns closes the fds of conns.
func CloseConns(conns []Conn) {
	for _, c := range conns {
		_ = unix.Close(c.FD)
	}
}

// takeNamed checks the name of a passed socket f and takes its fd.
// go-systemd already named a socket systemd gave no (or an empty) name
// "LISTEN_FD_<fd>".
//
// It returns the socket, or the error of [CheckName] or takeFile; f is
// closed in every case.
func takeNamed(f *os.File) (Socket, error) {
	name := f.Name()
	if err := CheckName(name); err != nil {
		f.Close()
		return Socket{}, err
	}
	fd, err := takeFile(f)
	return Socket{Name: name, FD: fd}, err
}

// takeFile duplicates the fd in f and closes f (the caller checks what the
// fd is).
//
// It returns the new fd, or an error if the duplication fails; f is closed
// in every case.
func takeFile(f *os.File) (int, error) {
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	return dupRaw(rc)
}

// closeFiles closes every file in files.
func closeFiles(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
