//go:build integration

package integration

import (
	"fmt"
	"net"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Dial opens a TCP connection to addr from inside the box's network
// namespace, for a box with its own network (BoxConfig.OwnNetwork); a box
// on the host's network shares the host's namespace, so it works for it too.
// The socket is created on a
// thread that joined the box's namespace and stays in it; that thread is
// never returned to the Go scheduler (it exits with its goroutine).
func (b *Box) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // no Unlock: the thread is discarded
		conn, err := b.dialInNetns(addr, timeout)
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// dialInNetns joins the box's network namespace on the current (locked)
// thread and dials addr.
func (b *Box) dialInNetns(addr string, timeout time.Duration) (net.Conn, error) {
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", b.PID), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open network namespace of box %s: %w", b.Name, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("join network namespace of box %s: %w", b.Name, err)
	}
	return net.DialTimeout("tcp", addr, timeout)
}
