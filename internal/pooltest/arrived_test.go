package pooltest

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWaitArrived: once WaitArrived returns, a connection no one accepted
// yet is in the listener's queue with its bytes and FIN (a non-blocking
// accept and read get them); a connection whose server end was reset
// (closed with SO_LINGER 0) is not arrived. Over IPv4 and IPv6.
func TestWaitArrived(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(listen, func(t *testing.T) { checkWaitArrived(t, listen) })
	}
}

// checkWaitArrived is TestWaitArrived on a listener at listen.
func checkWaitArrived(t *testing.T, listen string) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Skipf("listen %s: %v", listen, err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hello"))
	c.(*net.TCPConn).CloseWrite()
	WaitArrived(t, c)
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, _, err := unix.Accept4(int(f.Fd()), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	if err != nil {
		t.Fatalf("accept after WaitArrived: %v, want the connection queued", err)
	}
	buf := make([]byte, 16)
	n, err := unix.Read(fd, buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Errorf("read after WaitArrived: got %q, %v; want hello", buf[:n], err)
	}
	if n, err := unix.Read(fd, buf); n != 0 || err != nil {
		t.Errorf("second read: got %d, %v; want 0, nil (the FIN)", n, err)
	}
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	unix.Close(fd) // a reset
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.Read(buf) // returns once the reset is in
	if err := arrived(c); err == nil {
		t.Errorf("arrived after the server end was reset: got nil, want an error")
	}
}
