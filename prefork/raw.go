package prefork

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The master's per-connection system calls never block (its fds are
// non-blocking), so they are made raw: without telling the Go runtime, whose
// bookkeeping for a system call that might block wakes its monitor thread
// (sysmon) again each time the master wakes after a sleep, which then polls
// every 20µs for a while. The master's one blocking wait parks in the
// runtime's netpoller instead (poller.wait).

// rawEpollWait is epoll_wait(2) with a zero timeout.
func rawEpollWait(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// rawRead is read(2) on a non-blocking fd.
func rawRead(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawWrite is write(2) on a non-blocking fd.
func rawWrite(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawTCPInfo is getsockopt(fd, IPPROTO_TCP, TCP_INFO).
func rawTCPInfo(fd int) (unix.TCPInfo, error) {
	var info unix.TCPInfo
	size := uint32(unsafe.Sizeof(info))
	_, _, errno := unix.RawSyscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_INFO,
		uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&size)), 0)
	if errno != 0 {
		return info, errno
	}
	return info, nil
}

// rawTimerfdSettime sets timerfd fd to expire once, d from now (d > 0).
func rawTimerfdSettime(fd int, d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	_, _, errno := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), 0,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// rawAccept is accept4(fd, SOCK_CLOEXEC) without the peer's address: the
// connection stays blocking, as a child that gets it handed over expects
// (the master itself only peeks and writes with MSG_DONTWAIT).
func rawAccept(fd int) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0, unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawPeek is recv(fd, b, MSG_PEEK|MSG_DONTWAIT): what the peer has sent,
// left unread.
func rawPeek(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawSendNow is send(fd, b, MSG_DONTWAIT|MSG_NOSIGNAL), and recv with
// MSG_DONTWAIT when read is set: one try on a blocking socket.
func rawSendNow(fd int, b []byte, read bool) (int, error) {
	nr, flags := uintptr(unix.SYS_SENDTO), uintptr(unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
	if read {
		nr, flags = unix.SYS_RECVFROM, unix.MSG_DONTWAIT
	}
	n, _, errno := unix.RawSyscall6(nr, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), flags, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawRecvFD is recvmsg(2) on a non-blocking back-channel: the packet into
// b, and the first two file descriptors it carried (close-on-exec), -1
// where there is none (a child sends one, or two with a Write). Any further
// descriptors are closed.
func rawRecvFD(fd int, b []byte) (n int, got [2]int, err error) {
	var oob [64]byte // room for a few descriptors
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	msg := unix.Msghdr{Iov: &iov, Iovlen: 1, Control: &oob[0]}
	msg.SetControllen(len(oob))
	r, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_CMSG_CLOEXEC)
	if errno != 0 {
		return -1, noFDs, errno
	}
	got = noFDs
	if msg.Controllen > 0 {
		got = firstFDs(oob[:msg.Controllen])
	}
	if got[0] < 0 && msg.Flags&unix.MSG_CTRUNC != 0 {
		got[0] = fdLost
	}
	return int(r), got, nil
}

// noFDs is a packet's descriptors when it carried none.
var noFDs = [2]int{-1, -1}

// fdLost is rawRecvFD's descriptor when one was sent but the master could
// not take it (out of file descriptors: the kernel drops it).
const fdLost = -2

// firstFDs returns the first two descriptors in a control message buffer,
// -1 for each missing, and closes any others.
func firstFDs(oob []byte) [2]int {
	got, n := noFDs, 0
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return got
	}
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if n < len(got) {
				got[n] = fd
				n++
				continue
			}
			unix.Close(fd)
		}
	}
	return got
}

// rawSendFD is sendmsg(2) of packet b with descriptor fd attached
// (SCM_RIGHTS), on a non-blocking back-channel, without an allocation.
func rawSendFD(ch int, b []byte, fd int) error { return rawSendFDs(ch, b, fd, -1) }

// rawSendFDs is rawSendFD with a second descriptor, fd2, after fd (none if
// fd2 is -1).
func rawSendFDs(ch int, b []byte, fd, fd2 int) error {
	var oob [24]uint64 // a cmsghdr and two ints, 8-byte aligned; only the first unix.CmsgSpace(4*n) bytes are sent
	n := 1
	if fd2 >= 0 {
		n = 2
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_RIGHTS
	h.SetLen(unix.CmsgLen(4 * n))
	data := (*[2]int32)(unsafe.Pointer(uintptr(unsafe.Pointer(&oob[0])) + uintptr(unix.CmsgLen(0))))
	data[0], data[1] = int32(fd), int32(fd2)
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	msg := unix.Msghdr{Iov: &iov, Iovlen: 1, Control: (*byte)(unsafe.Pointer(&oob[0]))}
	msg.SetControllen(unix.CmsgSpace(4 * n))
	_, _, errno := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(ch), uintptr(unsafe.Pointer(&msg)), unix.MSG_NOSIGNAL)
	if errno != 0 {
		return errno
	}
	return nil
}

// rawClose is close(2).
func rawClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}
