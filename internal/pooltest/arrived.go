package pooltest

import (
	endian "encoding/binary" // binary names the actd binary (pooltest.go)
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TCP states as the kernel numbers them (include/net/tcp_states.h).
const (
	tcpEstablished = 1
	tcpCloseWait   = 8
)

// arriveBound is how long WaitArrived waits; not a speed assertion.
const arriveBound = 10 * time.Second

// WaitArrived waits until what each of conns (the client ends of TCP
// connections to a listener on this host) sent is in: the kernel has every
// byte it wrote, and its FIN if it closed its side, acknowledged (SIOCOUTQ
// 0), and its server end is a whole connection (ESTABLISHED or CLOSE_WAIT:
// in the accept queue, if no one took it yet).
// It is the condition a test waits for before it lets a worker look at
// its queue. More than arriveBound fails t.
func WaitArrived(t testing.TB, conns ...net.Conn) {
	t.Helper()
	deadline := time.Now().Add(arriveBound)
	for _, c := range conns {
		for {
			err := arrived(c)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("connection from %v: not in after %v: %v", c.LocalAddr(), arriveBound, err)
			}
			time.Sleep(time.Millisecond) // the poll's period
		}
	}
}

// arrived returns nil if c's bytes and FIN are acknowledged and its
// server end is whole, else an error saying what is not yet so.
func arrived(c net.Conn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return fmt.Errorf("%T has no file descriptor", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	unacked := -1
	if cerr := rc.Control(func(fd uintptr) { unacked, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) }); cerr != nil {
		return cerr
	}
	if err != nil || unacked != 0 {
		return fmt.Errorf("SIOCOUTQ: %d bytes not acknowledged (%v)", unacked, err)
	}
	state, err := serverState(c.RemoteAddr().(*net.TCPAddr), c.LocalAddr().(*net.TCPAddr))
	if err != nil {
		return err
	}
	if state != tcpEstablished && state != tcpCloseWait {
		return fmt.Errorf("server end in TCP state %d, want ESTABLISHED or CLOSE_WAIT", state)
	}
	return nil
}

// serverState returns the TCP state (include/net/tcp_states.h) of the
// socket at local connected to remote, asked of the kernel by its
// addresses (NETLINK_SOCK_DIAG, one socket: /proc/net/tcp walks every
// TIME_WAIT socket of a busy machine), or an error if there is none.
func serverState(local, remote *net.TCPAddr) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, diagLookup(local, remote), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("sock_diag request: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("sock_diag receive: %w", err)
	}
	ne := endian.NativeEndian
	switch {
	case n < unix.NLMSG_HDRLEN+2:
		return 0, fmt.Errorf("sock_diag: short answer of %d bytes", n)
	case ne.Uint16(buf[4:]) == unix.NLMSG_ERROR:
		return 0, fmt.Errorf("no socket %v connected to %v yet (sock_diag error %d)", local, remote, int32(ne.Uint32(buf[unix.NLMSG_HDRLEN:])))
	}
	return int(buf[unix.NLMSG_HDRLEN+1]), nil // inet_diag_msg: family, state
}

// diagLookup builds an inet_diag_req_v2 (linux/inet_diag.h) for the one
// TCP socket at local connected to remote.
func diagLookup(local, remote *net.TCPAddr) []byte {
	const reqLen = 56 // family, protocol, ext, pad, states, inet_diag_sockid (48)
	b := make([]byte, unix.NLMSG_HDRLEN+reqLen)
	ne := endian.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	req := b[unix.NLMSG_HDRLEN:]
	req[0], req[1] = unix.AF_INET6, unix.IPPROTO_TCP
	lip, rip := local.IP.To16(), remote.IP.To16()
	if l4, r4 := local.IP.To4(), remote.IP.To4(); l4 != nil && r4 != nil {
		req[0], lip, rip = unix.AF_INET, l4, r4
	}
	ne.PutUint32(req[4:], ^uint32(0)) // every state
	id := req[8:]
	endian.BigEndian.PutUint16(id[0:], uint16(local.Port))
	endian.BigEndian.PutUint16(id[2:], uint16(remote.Port))
	copy(id[4:20], lip)
	copy(id[20:36], rip)
	ne.PutUint32(id[40:], ^uint32(0)) // INET_DIAG_NOCOOKIE
	ne.PutUint32(id[44:], ^uint32(0))
	return b
}
