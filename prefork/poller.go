package prefork

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// kind says what an epoll event is about. It travels in the event's Fd
// field, the index (listener or slot number) in its Pad field.
type kind int32

const (
	kindWake     kind = iota // the wake eventfd: a call or shutdown is queued
	kindListener             // a listening socket is readable
	kindChannel              // a child's back-channel is readable or closed (reports.go)
	kindPidfd                // a child has exited
)

// poller is the master's one epoll set.
type poller struct {
	fd     int
	events []unix.EpollEvent
}

func newPoller() (*poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return &poller{fd: fd, events: make([]unix.EpollEvent, 128)}, nil
}

func (p *poller) ctl(op, fd int, events uint32, k kind, index int) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(k), Pad: int32(index)}
	if err := unix.EpollCtl(p.fd, op, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl %d fd %d: %w", op, fd, err)
	}
	return nil
}

// Epoll events the master asks for: readable, and edge-triggered.
const (
	eventIn   uint32 = unix.EPOLLIN
	eventEdge uint32 = unix.EPOLLET
)

// add registers fd for events (eventIn, maybe eventEdge; 0 registers it
// unwatched).
func (p *poller) add(fd int, events uint32, k kind, index int) error {
	return p.ctl(unix.EPOLL_CTL_ADD, fd, events, k, index)
}

// arm changes the events reported for fd (0: none) while keeping it
// registered.
func (p *poller) arm(fd int, events uint32, k kind, index int) error {
	return p.ctl(unix.EPOLL_CTL_MOD, fd, events, k, index)
}

func (p *poller) remove(fd int) {
	_ = unix.EpollCtl(p.fd, unix.EPOLL_CTL_DEL, fd, nil)
}

// wait returns the ready events, waiting at most msec milliseconds (-1: no
// limit). An interrupted wait returns no events and no error.
func (p *poller) wait(msec int) ([]unix.EpollEvent, error) {
	n, err := unix.EpollWait(p.fd, p.events, msec)
	if errors.Is(err, unix.EINTR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("epoll_wait: %w", err)
	}
	return p.events[:n], nil
}

func (p *poller) close() { unix.Close(p.fd) }
