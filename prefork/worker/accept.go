package worker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// acceptOne accepts one connection from listener fd. It returns nil, nil
// when there is none (another child took it, or the client gave up).
// Resource errors (EMFILE, ENFILE, ENOBUFS, ENOMEM) are returned for the
// caller to back off on; they leave the connection queued.
func acceptOne(fd int) (net.Conn, error) {
	for {
		nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ECONNABORTED):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("accept: %w", err)
		}
		f := os.NewFile(uintptr(nfd), "conn")
		c, err := net.FileConn(f) // dups the fd
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("accept: %w", err)
		}
		return c, nil
	}
}

// pause spaces out accept attempts after resource errors, so a child out of
// file descriptors does not spin: 10ms doubling up to 1s; a success resets it.
type pause time.Duration

func (p *pause) wait() {
	*p = pause(min(max(2*time.Duration(*p), 10*time.Millisecond), time.Second))
	time.Sleep(time.Duration(*p))
}

func (p *pause) reset() { *p = 0 }
