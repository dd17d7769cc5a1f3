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
