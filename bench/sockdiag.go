package main

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// socketCounts is the state of one TCP port's sockets at one moment.
type socketCounts struct {
	queue    int                 // connections waiting in the listener's accept queue (its idiag_rqueue)
	accepted int                 // server-side connections in ESTABLISHED or CLOSE_WAIT that a process has accepted
	inodes   map[uint64]struct{} // the socket inodes of the accepted connections
}

// TCP states as the kernel numbers them (include/net/tcp_states.h).
const (
	tcpEstablished = 1
	tcpCloseWait   = 8
	tcpListen      = 10
)

// Sizes of the sock_diag structures (linux/inet_diag.h).
const (
	inetDiagReqV2Len = 56 // family, protocol, ext, pad, states, sockid(48)
	inetDiagMsgLen   = 72 // family, state, timer, retrans, sockid(48), expires, rqueue, wqueue, uid, inode
)

// countSockets asks the kernel (NETLINK_SOCK_DIAG) for the IPv4 TCP sockets
// in LISTEN, ESTABLISHED and CLOSE_WAIT and counts those whose local port is
// port. Unlike reading /proc/net/tcp it does not walk TIME_WAIT sockets,
// which pile up by the ten thousand under one-request-per-connection load.
// It returns an error if the netlink exchange fails.
func countSockets(port int) (socketCounts, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return socketCounts{}, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, diagRequest(), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return socketCounts{}, fmt.Errorf("sock_diag request: %w", err)
	}
	counts := socketCounts{inodes: map[uint64]struct{}{}}
	buf := make([]byte, 64*1024)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return socketCounts{}, fmt.Errorf("sock_diag receive: %w", err)
		}
		done, err := addDiagMessages(&counts, buf[:n], port)
		if err != nil || done {
			return counts, err
		}
	}
}

// diagRequest builds the dump request for IPv4 TCP sockets in the states
// countSockets counts.
func diagRequest() []byte {
	b := make([]byte, unix.NLMSG_HDRLEN+inetDiagReqV2Len)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	req := b[unix.NLMSG_HDRLEN:]
	req[0], req[1] = unix.AF_INET, unix.IPPROTO_TCP
	ne.PutUint32(req[4:], 1<<tcpEstablished|1<<tcpCloseWait|1<<tcpListen)
	return b
}

// addDiagMessages counts the sockets in one datagram of netlink messages.
// It returns true at the end of the dump, or an error for a netlink error
// or a truncated message.
func addDiagMessages(c *socketCounts, b []byte, port int) (bool, error) {
	ne := binary.NativeEndian
	for len(b) >= unix.NLMSG_HDRLEN {
		msgLen, msgType := int(ne.Uint32(b[0:])), ne.Uint16(b[4:])
		if msgLen < unix.NLMSG_HDRLEN || msgLen > len(b) {
			return false, fmt.Errorf("sock_diag: bad message length %d", msgLen)
		}
		switch msgType {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			return false, fmt.Errorf("sock_diag: kernel error %d", int32(ne.Uint32(b[unix.NLMSG_HDRLEN:])))
		}
		if msg := b[unix.NLMSG_HDRLEN:msgLen]; len(msg) >= inetDiagMsgLen {
			c.add(msg, port)
		}
		b = b[min(nlmsgAlign(msgLen), len(b)):]
	}
	return false, nil
}

// add counts one inet_diag_msg if its local port is port.
func (c *socketCounts) add(msg []byte, port int) {
	state := msg[1]
	localPort := int(binary.BigEndian.Uint16(msg[4:]))
	if localPort != port {
		return
	}
	switch state {
	case tcpListen:
		c.queue += int(binary.NativeEndian.Uint32(msg[56:])) // idiag_rqueue: accept queue length
	case tcpEstablished, tcpCloseWait:
		// A connection still in the accept queue has no file yet, so its
		// inode is 0; an accepted one has the inode of its socket file.
		if inode := binary.NativeEndian.Uint32(msg[68:]); inode != 0 {
			c.accepted++
			c.inodes[uint64(inode)] = struct{}{}
		}
	}
}

// nlmsgAlign rounds n up to the netlink alignment of 4 bytes.
func nlmsgAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }
