// Package fdwait waits for one fd to become readable, the way a test
// means it: within a bound of wall time, whatever signals arrive meanwhile.
//
// A bare poll(2) returns EINTR whenever a signal reaches the thread, and a
// Go program gets signals of its own (the runtime preempts goroutines with
// SIGURG), so a test that reads EINTR as "not readable" fails at random.
package fdwait

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Readable reports whether fd becomes readable (or hung up) within bound.
// It polls again after EINTR with what is left of bound; any other poll
// error is returned.
func Readable(fd int, bound time.Duration) (bool, error) {
	deadline := time.Now().Add(bound)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		n, err := unix.Poll(fds, int((left+time.Millisecond-1)/time.Millisecond))
		switch {
		case errors.Is(err, unix.EINTR) && left > 0:
			continue
		case errors.Is(err, unix.EINTR):
			return false, nil
		case err != nil:
			return false, err
		}
		return n == 1, nil
	}
}
