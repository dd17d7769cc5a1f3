package prefork

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every fd from 3 up close-on-exec, so that a
// child gets exactly the layout of protocol/fds.go: whatever the master itself
// inherited without the flag (from a shell, a wrapper, systemd's extra fds)
// stays out of the workers. Go opens its own fds close-on-exec already.
func closeInheritedOnExec() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	// close_range unavailable (old kernel, seccomp): walk /proc/self/fd.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("mark inherited fds close-on-exec: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= 3 {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}
