package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// runChild accepts connections on the blocking listener at listenerFD, one
// at a time, and serves each to its end: with plain system calls, or through
// a Go net.Conn (and so the runtime's netpoller) when netConn is set. It
// returns only on an accept error other than EINTR or ECONNABORTED; SIGTERM
// ends the process directly.
func runChild(slot string, delay time.Duration, netConn bool) error {
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
		if err := serveAccepted(fd, slot, delay, netConn); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", slot, err)
		}
	}
}

// serveAccepted serves the accepted socket fd and closes it. It returns
// serveConn's error, or the error of making a net.Conn of fd.
func serveAccepted(fd int, slot string, delay time.Duration, netConn bool) error {
	if !netConn {
		defer syscall.Close(fd)
		return serveConn(fdConn(fd), slot, delay)
	}
	f := os.NewFile(uintptr(fd), "conn")
	c, err := net.FileConn(f) // dups fd and registers it with the netpoller
	f.Close()
	if err != nil {
		return fmt.Errorf("net.FileConn: %w", err)
	}
	defer c.Close()
	return serveConn(c, slot, delay)
}
