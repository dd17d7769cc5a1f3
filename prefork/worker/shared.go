package worker

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// serveShared is the shared mode for a Go worker: no back-channel, every
// child polls every listener and accepts (a herd the mode accepts by design).
// It returns nil when ctx is done, after the connection in hand.
func serveShared(ctx context.Context, env Env, h connServer) error {
	fds := make([]unix.PollFd, len(env.Listeners))
	for i, fd := range env.Listeners {
		fds[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	var p pause
	for ctx.Err() == nil {
		_, err := unix.Poll(fds, 1000)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("poll: %w", err)
		}
		for i := range fds {
			if fds[i].Revents&unix.POLLIN == 0 {
				continue
			}
			c, err := acceptOne(env.Listeners[i])
			if err != nil {
				p.wait()
				continue
			}
			p.reset()
			if c >= 0 {
				h(c, i)
			}
		}
	}
	return nil
}
