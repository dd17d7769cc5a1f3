package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// serveOne runs the built-in handler on one accepted TCP connection, as a
// child would, and returns the client's end and a channel closed when the
// handler has returned and closed its end.
func serveOne(t *testing.T) (net.Conn, <-chan struct{}) {
	t.Helper()
	c, fd := acceptOne(t)
	done := make(chan struct{})
	h := httpHandler(0, "")
	go func() {
		h(fd, false)
		unix.Close(fd)
		close(done)
	}()
	t.Cleanup(func() {
		c.Close()
		<-done
	})
	return c, done
}

// acceptOne returns both ends of a TCP connection on 127.0.0.1: the
// client's, and the server's as a blocking fd, as accept4 gives a child.
// The caller closes them.
func acceptOne(t *testing.T) (net.Conn, int) {
	t.Helper()
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(lfd, 1); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port))
	if err != nil {
		t.Fatal(err)
	}
	fd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c, fd
}

// answers reads status lines from c until it closes, and returns them.
func answers(c net.Conn, within time.Duration) ([]string, error) {
	c.SetReadDeadline(time.Now().Add(within))
	var got []string
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, "HTTP/") {
			got = append(got, strings.TrimSpace(line))
		}
		var ne net.Error
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, unix.ECONNRESET):
			return got, nil
		case errors.As(err, &ne) && ne.Timeout():
			return got, fmt.Errorf("still open after %v", within)
		case err != nil:
			return got, err
		}
	}
}

// TestHandlerRejectsWhatIsNotHTTP: real sockets against the built-in
// handler; every malformed request gets its status and a close.
func TestHandlerRejectsWhatIsNotHTTP(t *testing.T) {
	manyHeaders := "GET / HTTP/1.1\r\n" + strings.Repeat("X-A: b\r\n", 10000) + "\r\n"
	for _, tc := range []struct {
		name, send string
		want       []string
	}{
		{"one request, close", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", []string{"HTTP/1.1 200 OK"}},
		{"no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"keep-alive with a body, then close", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.0\r\n\r\n", []string{"HTTP/1.1 200 OK", "HTTP/1.1 200 OK"}},
		{"bare LF line ends", "GET / HTTP/1.0\n\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"random bytes", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\xa7\n\x99\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"random bytes, no line end", strings.Repeat("\x8f\x11", 6000), []string{"HTTP/1.1 400 Bad Request"}},
		{"no version", "GET /\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"not HTTP", "GET / SMTP/1.0\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"HTTP/2 in a 1.x line", "GET / HTTP/2.0\r\n\r\n", []string{"HTTP/1.1 505 HTTP Version Not Supported"}},
		{"NUL in the target", "GET /a\x00b HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"NUL in a header", "GET / HTTP/1.1\r\nHost: a\x00b\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"NUL alone", "\x00\x00\x00\x00\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"header without colon", "GET / HTTP/1.1\r\nHost\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"folded header", "GET / HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"bad content length", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", []string{"HTTP/1.1 400 Bad Request"}},
		{"chunked body", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", []string{"HTTP/1.1 200 OK"}},
		{"gzip body", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", []string{"HTTP/1.1 501 Not Implemented"}},
		{"100 headers", "GET / HTTP/1.0\r\n" + strings.Repeat("X-A: b\r\n", maxHeaders) + "\r\n", []string{"HTTP/1.1 200 OK"}},
		{"101 headers", "GET / HTTP/1.0\r\n" + strings.Repeat("X-A: b\r\n", maxHeaders+1) + "\r\n", []string{"HTTP/1.1 431 Request Header Fields Too Large"}},
		{"10,000 headers", manyHeaders, []string{"HTTP/1.1 431 Request Header Fields Too Large"}},
		{"a 10 KB header", "GET / HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("b", 10<<10) + "\r\n\r\n", []string{"HTTP/1.1 200 OK"}},
		{"a 40 KB header", "GET / HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("b", 40<<10) + "\r\n\r\n", []string{"HTTP/1.1 431 Request Header Fields Too Large"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, done := serveOne(t)
			go func() {
				io.WriteString(c, tc.send)
				c.(*net.TCPConn).CloseWrite()
			}()
			got, err := answers(c, 5*time.Second)
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, %v; want %q and a close", got, err, tc.want)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Errorf("handler still holds the connection")
			}
		})
	}
}

// TestHandlerBoundsSlowClients: a client trickling its head gets 408 and
// the close by the request deadline (plus the linger), not 5 s per byte; an
// idle one is closed quietly after the idle limit.
func TestHandlerBoundsSlowClients(t *testing.T) {
	for _, tc := range []struct {
		name   string
		every  time.Duration // between bytes; 0: send nothing
		want   []string
		within time.Duration
	}{
		{"trickle", 500 * time.Millisecond, []string{"HTTP/1.1 408 Request Timeout"}, requestDeadline + lingerFor + 2*time.Second},
		{"trickle slower than a read", 3 * time.Second, []string{"HTTP/1.1 408 Request Timeout"}, requestDeadline + lingerFor + 2*time.Second},
		{"idle", 0, nil, keepAliveIdle + 2*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, done := serveOne(t)
			if tc.every > 0 {
				go trickle(c, "GET / HTTP/1.1\r\n"+strings.Repeat("X-A: b\r\n", 100), tc.every, done)
			}
			got, err := answers(c, tc.within)
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, %v; want %q and a close within %v", got, err, tc.want, tc.within)
			}
		})
	}
}

// trickle writes s one byte every d until done.
func trickle(c net.Conn, s string, d time.Duration, done <-chan struct{}) {
	for i := range len(s) {
		if _, err := io.WriteString(c, s[i:i+1]); err != nil {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(d):
		}
	}
}

// TestHandlerInPool: through a real pool, garbage gets 400 and the next
// client is served.
func TestHandlerInPool(t *testing.T) {
	a := startActd(t, nil, "--max-children", "1")
	c, err := net.DialTimeout("unix", a.sock, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "\x00\x01garbage\r\n\r\n")
	if got, err := answers(c, 10*time.Second); err != nil || len(got) != 1 || got[0] != "HTTP/1.1 400 Bad Request" {
		t.Errorf("got %q, %v; want one 400 and a close", got, err)
	}
	if body, err := a.get(); err != nil {
		t.Errorf("after the garbage: got %q, %v; want an answer", body, err)
	}
}
