package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// channelTag marks the back-channel's events in the child's epoll set;
// listener i is tagged i.
const channelTag = -1

// serveExclusive accepts by itself: the listeners sit in the child's own
// epoll set with EPOLLEXCLUSIVE, so the kernel wakes one idle child per
// connection — the earliest registered. The child registers when the master
// says so (an Accept order), which it does in slot order, so the low slots
// stay hot; it answers Idle once registered.
func serveExclusive(env Env, ch channel, h connServer) error {
	if done, err := waitArming(ch); done || err != nil {
		return err
	}
	ep, err := exclusiveSet(env)
	if err != nil {
		return err
	}
	defer unix.Close(ep)
	if err := ch.send(protocol.Idle, 0, 0); err != nil { // registered
		return err
	}
	events := make([]unix.EpollEvent, len(env.Listeners)+1)
	var p pause
	var again retry
	report := newLateBusy(ch)
	for {
		n, err := waitEvents(ep, events, report)
		if err != nil {
			return err
		}
		// Orders first: a drain must win over a waiting connection.
		if done, err := channelEvents(events[:n], ch, ep, env); done || err != nil {
			return err
		}
		for _, ev := range events[:n] {
			if ev.Fd != channelTag {
				if err := acceptExclusive(env, report, h, int(ev.Fd), &p, &again); err != nil {
					return err
				}
			}
		}
	}
}

// waitEvents waits for listeners or orders. Connections served and not yet
// reported go out servedDelay after the last report at the latest: a child
// that goes idle says so within that time, and a child that gets its next
// connection before then costs the master no wakeup (docs/protocol.md).
func waitEvents(ep int, events []unix.EpollEvent, report *lateBusy) (int, error) {
	for {
		n, err := unix.EpollWait(ep, events, report.flushIn())
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, fmt.Errorf("epoll_wait: %w", err)
		case n > 0:
			return n, nil
		}
		if err := report.flush(); err != nil {
			return 0, err
		}
	}
}

// waitArming waits for the master's go-ahead to register (an Accept order),
// answering pings meanwhile. It reports done after a drain or the master's end.
func waitArming(ch channel) (bool, error) {
	for {
		m, err := ch.recv()
		if err != nil {
			return true, endOf(err)
		}
		order, err := ch.order(m)
		switch {
		case err != nil:
			return true, err
		case order == protocol.Accept:
			return false, nil
		case order == protocol.Drain:
			return true, nil
		}
	}
}

// exclusiveSet makes the child's epoll set: the listeners, registered with
// EPOLLEXCLUSIVE in listener order, and the back-channel.
func exclusiveSet(env Env) (int, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("epoll_create1: %w", err)
	}
	if err := registerListeners(ep, env); err != nil {
		unix.Close(ep)
		return -1, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: channelTag}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, env.Channel, &ev); err != nil {
		unix.Close(ep)
		return -1, fmt.Errorf("epoll_ctl back-channel: %w", err)
	}
	return ep, nil
}

func registerListeners(ep int, env Env) error {
	for i, fd := range env.Listeners {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE, Fd: int32(i)}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return fmt.Errorf("epoll_ctl listener %d: %w", i, err)
		}
	}
	return nil
}

// registerAgain moves the child to the back of every listener's wait queue
// (an Accept order to a registered child: a lower slot registered after it).
// EPOLLEXCLUSIVE entries cannot be modified, only deleted and added anew.
func registerAgain(ep int, env Env) error {
	for i, fd := range env.Listeners {
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
			return fmt.Errorf("epoll_ctl del listener %d: %w", i, err)
		}
	}
	return registerListeners(ep, env)
}

// channelEvents handles a readable back-channel. It reports done after a
// drain order or the master's end.
func channelEvents(events []unix.EpollEvent, ch channel, ep int, env Env) (bool, error) {
	for _, ev := range events {
		if ev.Fd != channelTag {
			continue
		}
		m, err := ch.recv()
		if err != nil {
			return true, endOf(err)
		}
		order, err := ch.order(m)
		switch {
		case err != nil || order == protocol.Drain:
			return true, err
		case order == protocol.Accept:
			if err := registerAgain(ep, env); err != nil {
				return true, err
			}
			return false, ch.send(protocol.Idle, 0, 0)
		}
	}
	return false, nil
}

// acceptExclusive accepts and serves a connection from listener l, then,
// while tries find more, the next ones as one run (run.serve).
func acceptExclusive(env Env, report *lateBusy, h connServer, l int, p *pause, again *retry) error {
	r := run{begin: time.Now(), idle: true, again: again}
	return r.serve(env, report, h, l, p)
}
