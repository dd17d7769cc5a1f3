package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// busySocket listens on a unix socket at path with a backlog of one and
// fills the backlog, so that the next connect fails with EAGAIN. It returns
// the listener (nothing accepted yet) and the connections that fill it.
func busySocket(t *testing.T, path string) (net.Listener, []net.Conn) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 1); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), path)
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var fill []net.Conn
	for range 16 { // a bound: the kernel queues backlog+1
		c, err := net.Dial("unix", path)
		if errors.Is(err, syscall.EAGAIN) {
			return ln, fill
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fill = append(fill, c)
	}
	t.Fatalf("%d connections queued on a backlog of 1, want EAGAIN before", len(fill))
	return nil, nil
}

// TestStatusRetriesBusySocket: `actd status` on a control socket whose
// backlog is full (EAGAIN) says it is busy and retries, and prints the
// answer once the master gets to it, instead of asking whether actd runs.
func TestStatusRetriesBusySocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctl.sock")
	ln, fill := busySocket(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a speed
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "status", "--json", "--control-socket", path)
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	var stdout strings.Builder
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "actd status to say the socket is busy", 30*time.Second, func() bool {
		return strings.Contains(stderr.String(), "is busy")
	})
	for _, c := range fill {
		c.Close()
	}
	go answerStatus(ln, `{"version":"busy-test"}`)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitOK || !strings.Contains(stdout.String(), "busy-test") {
		t.Errorf("got status %d, stdout %q, stderr %q; want 0 and the answer", code, stdout.String(), stderr.String())
	}
	if want := "retrying for up to"; !strings.Contains(stderr.String(), want) {
		t.Errorf("got stderr %q, want %q in it", stderr.String(), want)
	}
	if strings.Contains(stderr.String(), "is actd running?") {
		t.Errorf("got stderr %q, want no doubt that actd runs", stderr.String())
	}
}

// answerStatus accepts connections on ln until it is closed and answers
// each request line with doc (a closed filler connection gets nothing).
func answerStatus(ln net.Listener, doc string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil && strings.TrimSpace(line) == "status" {
			c.Write([]byte(doc + "\n"))
		}
		c.Close()
	}
}

// TestDialControlGivesUp: a socket that stays busy fails with an error that
// wraps EAGAIN and says how long it waited, after saying it is busy once.
func TestDialControlGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctl.sock")
	busySocket(t, path)
	calls := 0
	_, err := dialControl(path, 300*time.Millisecond, func() { calls++ })
	if !errors.Is(err, syscall.EAGAIN) || !strings.Contains(err.Error(), "still busy after 300ms") || calls != 1 {
		t.Errorf("got %v and %d busy calls, want EAGAIN, still busy after 300ms and 1 call", err, calls)
	}
	if hint := statusHint(err); strings.Contains(hint, "is actd running") {
		t.Errorf("got hint %q for a busy socket, want no doubt that actd runs", hint)
	}
}
