package prefork

import (
	"encoding/binary"

	"syscall"

	"golang.org/x/sys/unix"
)

// Constants from linux/sock_diag.h and linux/unix_diag.h.
const (
	sockDiagByFamily = 20   // SOCK_DIAG_BY_FAMILY
	udiagShowRQLen   = 0x10 // UDIAG_SHOW_RQLEN
	unixDiagRQLen    = 4    // UNIX_DIAG_RQLEN
	tcpListenState   = 10   // TCP_LISTEN, as unix sockets report it
)

// queueDepthUnix asks NETLINK_SOCK_DIAG for the accept-queue length of the
// unix listening socket fd (TCP_INFO and SIOCINQ do not answer for unix
// sockets). It returns false if fd is no unix listener or the kernel says no.
func queueDepthUnix(fd int) (int, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, false
	}
	nl, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, false
	}
	defer unix.Close(nl)
	if err := unix.Sendto(nl, unixDiagRequest(uint32(st.Ino)), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, false
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(nl, buf, 0)
	if err != nil {
		return 0, false
	}
	return parseUnixDiagRQLen(buf[:n])
}

// unixDiagRequest builds an nlmsghdr + unix_diag_req asking for one socket
// by inode, with its receive-queue length.
func unixDiagRequest(ino uint32) []byte {
	const reqLen = unix.SizeofNlMsghdr + 24
	b := make([]byte, reqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], reqLen)
	ne.PutUint16(b[4:], sockDiagByFamily)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	r := b[unix.SizeofNlMsghdr:]
	r[0] = unix.AF_UNIX // sdiag_family; sdiag_protocol and pad stay 0
	ne.PutUint32(r[4:], 1<<tcpListenState)
	ne.PutUint32(r[8:], ino)
	ne.PutUint32(r[12:], udiagShowRQLen)
	ne.PutUint32(r[16:], ^uint32(0)) // cookie: none
	ne.PutUint32(r[20:], ^uint32(0))
	return b
}

// parseUnixDiagRQLen finds UNIX_DIAG_RQLEN in a sock_diag answer and returns
// its rqueue field, which for a listener is the accept-queue length.
func parseUnixDiagRQLen(b []byte) (int, bool) {
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil || len(msgs) == 0 || msgs[0].Header.Type != sockDiagByFamily {
		return 0, false
	}
	const diagMsgLen = 16 // unix_diag_msg
	data := msgs[0].Data
	if len(data) < diagMsgLen {
		return 0, false
	}
	for attrs := data[diagMsgLen:]; len(attrs) >= unix.SizeofRtAttr; {
		ne := binary.NativeEndian
		alen, atype := int(ne.Uint16(attrs[0:])), ne.Uint16(attrs[2:])
		if alen < unix.SizeofRtAttr || alen > len(attrs) {
			return 0, false
		}
		if atype == unixDiagRQLen && alen >= unix.SizeofRtAttr+8 {
			return int(ne.Uint32(attrs[unix.SizeofRtAttr:])), true
		}
		attrs = attrs[min((alen+3)&^3, len(attrs)):]
	}
	return 0, false
}
