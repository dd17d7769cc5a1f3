package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

// runParent opens the listening socket, starts n children on it and waits.
// It returns nil after a SIGTERM or SIGINT once every child has exited, or
// an error if the socket cannot be opened, a child cannot be started, or a
// child exits on its own.
func runParent(addr string, n int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	file, err := ln.(*net.TCPListener).File()
	if err != nil {
		return fmt.Errorf("listener file: %w", err)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	cmds := make([]*exec.Cmd, 0, n)
	exits := make(chan error, n)
	for slot := range n {
		cmd, err := startChild(slot, file)
		if err != nil {
			stopAll(cmds)
			return err
		}
		cmds = append(cmds, cmd)
		go func() { exits <- cmd.Wait() }()
	}
	select {
	case <-signals:
		stopAll(cmds)
		for range cmds {
			<-exits
		}
		return nil
	case err := <-exits:
		stopAll(cmds)
		return fmt.Errorf("a child exited: %v", err)
	}
}

// startChild re-executes this program as the child in slot with the
// listening socket at listenerFD. It returns the started command or the
// error of starting it.
func startChild(slot int, listener *os.File) (*exec.Cmd, error) {
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(slot))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{listener} // fd 3 = listenerFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start child %d: %w", slot, err)
	}
	return cmd, nil
}

// stopAll sends SIGTERM to every started child.
func stopAll(cmds []*exec.Cmd) {
	for _, cmd := range cmds {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
}
