package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// The client side of the control socket (actd status, actd reload): a
// master that answers controlClients at once leaves the rest in the
// listen backlog, and once that is full too a connect fails with EAGAIN.
// The master runs: the client waits for room instead of asking whether it
// does.
const (
	busyWait  = 10 * time.Second       // the longest a client retries a busy socket
	busyRetry = 100 * time.Millisecond // between two tries
)

// request sends one request line ("status", "reload") to the control
// socket at path and returns the whole answer, read within wait. A busy
// socket is retried for up to busyWait, saying so once on stderr.
func request(path, req string, wait time.Duration) ([]byte, error) {
	c, err := dialControl(path, busyWait, func() {
		fmt.Fprintf(os.Stderr, "actd %s: %s is busy (the master answers other clients and its backlog is full): retrying for up to %v\n",
			req, path, busyWait)
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, req+"\n"); err != nil {
		return nil, err
	}
	return io.ReadAll(c)
}

// dialControl connects to the unix socket at path. While the connect fails
// with EAGAIN (a full backlog) it retries every busyRetry for up to within,
// calling busy once before the first retry.
//
// It returns the connection, the dial error of any other failure, or an
// error wrapping EAGAIN that says how long the socket stayed busy.
func dialControl(path string, within time.Duration, busy func()) (net.Conn, error) {
	deadline := time.Now().Add(within)
	for first := true; ; first = false {
		c, err := net.DialTimeout("unix", path, 2*time.Second)
		if !errors.Is(err, syscall.EAGAIN) {
			return c, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("still busy after %v: %w", within, dialReason(err))
		}
		if first {
			busy()
		}
		time.Sleep(busyRetry)
	}
}
