package prefork

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// stdio is fds 0-2 of every child (protocol/fds.go): /dev/null, then the
// master's stdout and stderr, or /dev/null for one the master does not
// have. The loop opens it at Run's start (setup) and closes it at the end.
type stdio struct{ devnull, stdout, stderr int }

// closedStdio is a stdio not opened yet: close leaves it alone.
var closedStdio = stdio{devnull: -1, stdout: -1, stderr: -1}

// open opens /dev/null and looks for the master's stdout and stderr. It
// returns an error, and leaves io closed, if /dev/null cannot be opened.
func (io *stdio) open() error {
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/null: %w", err)
	}
	*io = stdio{devnull: null, stdout: openOr(1, null), stderr: openOr(2, null)}
	return nil
}

// openOr returns fd if it is open, else fallback.
func openOr(fd, fallback int) int {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return fallback
	}
	return fd
}

// close closes /dev/null; the master's stdout and stderr stay open.
func (io *stdio) close() {
	if io.devnull >= 0 {
		unix.Close(io.devnull)
	}
	*io = closedStdio
}

// files returns fds 0-2 for a child's file table.
func (io stdio) files() []uintptr {
	return []uintptr{uintptr(io.devnull), uintptr(io.stdout), uintptr(io.stderr)}
}
