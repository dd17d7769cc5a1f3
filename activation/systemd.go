package activation

import (
	"fmt"
	"os"

	sdactivation "github.com/coreos/go-systemd/v22/activation"
	"golang.org/x/sys/unix"
)

// Systemd returns the sockets systemd passed to this process, in activation
// order, named by LISTEN_FDNAMES.
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
// socket or cannot be duplicated; then it closes every fd it was given.
func Systemd() ([]Socket, error) {
	files := sdactivation.Files(true)
	if len(files) == 0 {
		return nil, nil
	}
	socks := make([]Socket, 0, len(files))
	for i, f := range files {
		sock, err := takeNamed(f)
		if err != nil {
			closeFiles(files[i+1:])
			_ = Close(socks)
			return nil, fmt.Errorf("systemd socket %d (%s): %w", i, f.Name(), err)
		}
		socks = append(socks, sock)
	}
	return socks, nil
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

// takeFile duplicates the listening socket in f and closes f.
//
// It returns the new fd, or an error if f is not a listening socket or the
// duplication fails; f is closed in every case.
func takeFile(f *os.File) (int, error) {
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, err := dupRaw(rc)
	if err != nil {
		return -1, err
	}
	if err := checkListening(fd); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// closeFiles closes every file in files.
func closeFiles(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
