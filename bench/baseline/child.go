package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// runChild accepts connections on the blocking listener at listenerFD, one
// at a time, and serves each to its end. It returns only on an accept error
// other than EINTR or ECONNABORTED; SIGTERM ends the process directly.
func runChild(slot string, delay time.Duration) error {
	signal.Reset(syscall.SIGTERM, syscall.SIGINT)
	if err := syscall.SetNonblock(listenerFD, false); err != nil {
		return fmt.Errorf("child %s: set blocking: %w", slot, err)
	}
	for {
		fd, _, err := syscall.Accept4(listenerFD, syscall.SOCK_CLOEXEC)
		switch err {
		case nil:
		case syscall.EINTR, syscall.ECONNABORTED:
			continue
		default:
			return fmt.Errorf("child %s: accept: %w", slot, err)
		}
		if err := serveConn(fd, slot, delay); err != nil && err != syscall.ECONNRESET {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", slot, err)
		}
		syscall.Close(fd)
	}
}
