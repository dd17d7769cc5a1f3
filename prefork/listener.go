package prefork

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Listener is one listening socket handed to the pool. The pool owns FD from
// New on and closes it when Run returns.
type Listener struct {
	Name string // LISTEN_FDNAMES entry; "" becomes "unknown"
	FD   int
}

// listener is the master's state for one Listener.
type listener struct {
	Listener
	index  int
	tcp    bool // TCP_INFO gives the accept-queue length
	edge   bool // dispatch mode, TCP: watched edge-triggered (dispatchMode.setup)
	armed  bool // watched in the master's epoll set
	orders int  // accept orders sent and not yet answered
	queue  int  // accept-queue length at the last tick, -1 if the kernel does not tell

	starved bool // connections waited with no idle child to order
	unsure  bool // edge: dispatched while orders were out, some maybe used
}

// newListener checks l and makes it non-blocking if nonblock is set.
func newListener(l Listener, index int, nonblock bool) (*listener, error) {
	typ, err := unix.GetsockoptInt(l.FD, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return nil, fmt.Errorf("listener %d (%s): %w", index, l.Name, err)
	}
	if typ != unix.SOCK_STREAM {
		return nil, fmt.Errorf("listener %d (%s): socket type %d, want a stream socket", index, l.Name, typ)
	}
	if nonblock {
		if err := unix.SetNonblock(l.FD, true); err != nil {
			return nil, fmt.Errorf("listener %d (%s): set non-blocking: %w", index, l.Name, err)
		}
	}
	if l.Name == "" {
		l.Name = "unknown"
	}
	_, tcpErr := unix.GetsockoptTCPInfo(l.FD, unix.IPPROTO_TCP, unix.TCP_INFO)
	tcp := tcpErr == nil
	return &listener{Listener: l, index: index, tcp: tcp}, nil
}

// pending returns how many connections wait to be accepted. An
// edge-triggered listener is asked at any time and answers its TCP accept
// queue length, which may be 0 (also if TCP_INFO fails, so that asking
// again after every answer cannot spin). A level-triggered one is asked when
// epoll says it is readable and answers at least 1: its queue length, or 1
// for sockets that do not tell.
func (l *listener) pending() int {
	if !l.tcp {
		return 1
	}
	info, err := rawTCPInfo(l.FD)
	switch {
	case l.edge && err != nil:
		return 0
	case err != nil:
		return 1
	case l.edge:
		return int(info.Unacked)
	}
	return max(int(info.Unacked), 1)
}

// queueDepth returns the number of connections waiting in fd's accept
// queue, and false if the kernel does not tell for this socket.
// TCP listeners answer through TCP_INFO (tcpi_unacked); unix listeners
// through NETLINK_SOCK_DIAG (see queueDepthUnix).
func queueDepth(fd int) (int, bool) {
	if info, err := rawTCPInfo(fd); err == nil {
		return int(info.Unacked), true
	}
	return queueDepthUnix(fd)
}
