package prefork

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// kind says what an epoll event is about. It travels in the event's Fd
// field, the index (listener, slot, or the owner's entry) in its Pad
// field. Every kind is here, and Pool.handle says who takes it.
type kind int32

const (
	kindWake         kind = iota // the wake eventfd: a call or shutdown is queued (call.go)
	kindListener                 // a listening socket is readable
	kindChannel                  // a child's back-channel is readable or closed (reports.go)
	kindPidfd                    // a child has exited
	kindTimer                    // a parked poller's timerfd: the deadline passed
	kindReports                  // the back-channels' nested set is readable (reports.go)
	kindHeld                     // a held connection; index: its entry in the holder's table (hold.go)
	kindLauncher                 // a launcher's own process's back-channel (a zygote's); index: the launcher's
	kindLauncherExit             // a launcher's own process has exited (launcher.go)
	kindOffload                  // a finishing connection; index: its entry in the sender's table (offload.go)
)

// poller is an epoll set of the master's.
type poller struct {
	fd     int
	events []unix.EpollEvent
	file   *os.File        // fd, registered in the Go runtime's netpoller (parked pollers)
	conn   syscall.RawConn // file's, to wait on it
	timer  int             // a parked poller's timerfd, in the set: its deadline
	armed  time.Time       // the deadline timer is set to
}

func newPoller() (*poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return &poller{fd: fd, events: make([]unix.EpollEvent, 128), timer: -1}, nil
}

// park makes wait sleep in the Go runtime's netpoller, which watches the
// epoll fd itself (it is readable when an event is ready), instead of in a
// blocking epoll_wait: the runtime then sees an idle process, and its
// monitor thread sleeps too. A poller that is not parked blocks in
// epoll_wait (shared mode, whose loop stays on one locked thread).
//
// A parked poller's deadline is a timerfd in its own set, not a Go timer: a
// Go timer also wakes the runtime's monitor thread (sysmon), which sleeps
// until the next timer and then polls every 20µs or more until the process
// is idle again, about seven wake-ups per tick of an idle master.
func (p *poller) park() error {
	if err := unix.SetNonblock(p.fd, true); err != nil {
		return fmt.Errorf("epoll fd: %w", err)
	}
	timer, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("timerfd_create: %w", err)
	}
	p.timer = timer
	if err := p.add(timer, eventIn, kindTimer, 0); err != nil {
		return err
	}
	p.file = os.NewFile(uintptr(p.fd), "epoll")
	conn, err := p.file.SyscallConn()
	if err != nil {
		return fmt.Errorf("epoll fd: %w", err)
	}
	p.conn = conn
	return nil
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

// wait returns the ready events, waiting until until at most (a time that
// has passed: a poll). An interrupted wait returns no events and no error.
// A parked poller's timer is set only when until changes (once per tick),
// not at every wait; its expiry comes back as a kindTimer event.
func (p *poller) wait(until time.Time) ([]unix.EpollEvent, error) {
	d := time.Until(until)
	switch {
	case d <= 0:
		return p.poll()
	case p.conn == nil:
		return p.block(int((d + time.Millisecond - 1) / time.Millisecond))
	}
	if err := p.setTimer(until, d); err != nil {
		return nil, err
	}
	var events []unix.EpollEvent
	var pollErr error
	err := p.conn.Read(func(uintptr) bool {
		events, pollErr = p.poll()
		return len(events) > 0 || pollErr != nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait on epoll fd: %w", err)
	}
	return events, pollErr
}

// setTimer makes the timerfd expire d from now, for the deadline until,
// unless it is set for until already.
func (p *poller) setTimer(until time.Time, d time.Duration) error {
	if until.Equal(p.armed) {
		return nil
	}
	if err := rawTimerfdSettime(p.timer, d); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	p.armed = until
	return nil
}

// expired clears the timerfd's expiry, which wait reported as a kindTimer
// event: the deadline passed, and the next wait sets the timer again.
func (p *poller) expired() {
	var buf [8]byte
	_, _ = rawRead(p.timer, buf[:])
	p.armed = time.Time{}
}

// block waits in epoll_wait itself: a poller that is not parked.
func (p *poller) block(msec int) ([]unix.EpollEvent, error) {
	return p.ready(unix.EpollWait(p.fd, p.events, msec))
}

// poll returns the events ready now.
func (p *poller) poll() ([]unix.EpollEvent, error) {
	return p.ready(rawEpollWait(p.fd, p.events))
}

// ready turns epoll_wait's result into events: none for an interruption.
func (p *poller) ready(n int, err error) ([]unix.EpollEvent, error) {
	if errors.Is(err, unix.EINTR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("epoll_wait: %w", err)
	}
	return p.events[:n], nil
}

func (p *poller) close() {
	if p.timer >= 0 {
		unix.Close(p.timer)
	}
	if p.file != nil {
		p.file.Close()
		return
	}
	unix.Close(p.fd)
}
