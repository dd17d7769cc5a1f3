package notify

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// FDStore puts fds in systemd's file descriptor store (sd_notify FDSTORE=1
// with FDNAME=, the fd attached as SCM_RIGHTS) and takes them out
// (FDSTOREREMOVE=1), over one datagram socket kept open, so that neither
// costs a socket of its own. systemd keeps the stored fds across a restart
// of the service that it does itself (Restart=, the watchdog) and passes
// them back in LISTEN_FDS; the unit must allow them (FileDescriptorStoreMax=).
//
// go-systemd's daemon package sends no fds, so FDStore writes the
// datagrams itself. An FDStore is safe for concurrent use.
type FDStore struct {
	mu sync.Mutex
	fd int
}

// fdStoreTimeout bounds a send to systemd: a manager that does not read
// its notify socket must not hold the caller (the master loop) for long.
const fdStoreTimeout = 100 * time.Millisecond

// OpenFDStore opens a socket to NOTIFY_SOCKET (a path, or "@name" for an
// abstract socket) for [FDStore.Store] and [FDStore.Remove].
//
// It returns nil, nil when NOTIFY_SOCKET is unset, and an error when the
// socket cannot be made or connected.
func OpenFDStore() (*FDStore, error) {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil, nil
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fd store: socket: %w", err)
	}
	tv := unix.NsecToTimeval(fdStoreTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("fd store: SO_SNDTIMEO: %w", err)
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: addr}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("fd store: connect %s: %w", addr, err)
	}
	return &FDStore{fd: fd}, nil
}

// Store sends FDSTORE=1 with FDNAME=name and a copy of fd (the caller keeps
// fd), without waiting: a manager that lags behind gets no more fds. name
// must pass activation.CheckName: systemd drops a message whose name it
// rejects.
//
// It returns nil when sent, or the send error (EAGAIN: systemd's queue is
// full; a closed FDStore: EBADF).
func (s *FDStore) Store(fd int, name string) error {
	return s.send("FDSTORE=1\nFDNAME="+name, unix.UnixRights(fd), unix.MSG_DONTWAIT, "FDSTORE")
}

// Remove sends FDSTOREREMOVE=1 with FDNAME=name: systemd closes every fd it
// stores under name.
//
// It waits for room in systemd's queue up to fdStoreTimeout: a copy left
// behind would keep the connection open after its child closed it.
//
// It returns nil when sent, or the send error.
func (s *FDStore) Remove(name string) error {
	return s.send("FDSTOREREMOVE=1\nFDNAME="+name, nil, 0, "FDSTOREREMOVE")
}

// send writes one datagram, state with oob and flags, and names verb in the
// error.
func (s *FDStore) send(state string, oob []byte, flags int, verb string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		err := unix.Sendmsg(s.fd, []byte(state), oob, nil, flags|unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("sd_notify %s: %w", verb, err)
		}
		return nil
	}
}

// Close closes the socket. Later sends fail.
func (s *FDStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fd < 0 {
		return nil
	}
	err := unix.Close(s.fd)
	s.fd = -1
	return err
}
