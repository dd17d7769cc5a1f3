package prefork

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxOrphans bounds one round of reapOrphans.
const maxOrphans = 64

// reapOrphans reaps exited processes that became the master's as a child
// subreaper (Preload, zygote.go) and that no slot or zygote owns: a fork
// whose hello never came, or a worker's own descendant orphaned by its
// exit. It peeks (WNOWAIT) at the next exited child and stops at one a
// slot or zygote owns, which their pidfd's event reaps.
func (zs *zygotes) reapOrphans() {
	for range maxOrphans {
		pid := exitedChild()
		if pid <= 0 || zs.owns(pid) {
			return
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err != nil {
			return
		}
		zs.p.log.Debug("reaped an orphan", "pid", pid, "exit", exitText(ws, nil))
	}
}

// exitedChild returns the PID of an exited child not yet waited for,
// leaving it so (waitid WNOWAIT), or 0 if there is none.
func exitedChild() int {
	var info [128]byte // siginfo_t; si_pid is the int32 at offset 16 on Linux
	_, _, errno := unix.Syscall6(unix.SYS_WAITID, unix.P_ALL, 0, uintptr(unsafe.Pointer(&info[0])),
		unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(int32(binary.NativeEndian.Uint32(info[16:20])))
}

// owns reports whether pid is a slot's child or a zygote.
func (zs *zygotes) owns(pid int) bool {
	for _, s := range zs.p.slots {
		if s.live() && s.pid == pid {
			return true
		}
	}
	for _, z := range zs.all {
		if z.pid == pid {
			return true
		}
	}
	return false
}
