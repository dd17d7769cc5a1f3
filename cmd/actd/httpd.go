package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/worker"
)

// keepAliveIdle bounds how long the built-in handler waits for the next
// request on a kept-alive connection: a prefork child serves one connection
// at a time, so an idle client must not hold it long.
const keepAliveIdle = 5 * time.Second

// httpHandler returns the built-in handler: a minimal HTTP/1.x responder
// that answers every request with "slot=K pid=P\n" after waiting delay,
// keeping the connection open as HTTP/1.1 allows. It works on the blocking
// fd with plain read and write: a child serves one connection at a time, so
// it needs no netpoller, and reuses one buffer for every connection.
func httpHandler(delay time.Duration) worker.FDHandler {
	body := []byte("slot=" + os.Getenv("ACTD_SLOT") + " pid=" + strconv.Itoa(os.Getpid()) + "\n")
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	keep := append([]byte(head+"\r\n"), body...)
	closing := append([]byte(head+"Connection: close\r\n\r\n"), body...)
	idle := unix.NsecToTimeval(keepAliveIdle.Nanoseconds())
	conn := &fdConn{}
	r := bufio.NewReaderSize(conn, 4096)
	return func(fd int) {
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &idle)
		conn.fd = fd
		r.Reset(conn)
		for {
			again, ok := readRequest(r)
			if !ok {
				return
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			resp := keep
			if !again {
				resp = closing
			}
			if err := conn.writeAll(resp); err != nil || !again {
				return
			}
		}
	}
}

// fdConn reads and writes a blocking socket fd.
type fdConn struct{ fd int }

// Read reads from the socket; the peer's close is io.EOF, a SO_RCVTIMEO
// timeout an error.
func (c *fdConn) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(c.fd, p)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *fdConn) writeAll(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(c.fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readRequest reads one request's head and body. It reports whether the
// client wants the connection kept open, and false for ok on EOF or a
// malformed request.
func readRequest(r *bufio.Reader) (keepAlive, ok bool) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return false, false
	}
	keepAlive = bytes.Contains(line, []byte("HTTP/1.1"))
	length := 0
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return false, false
		}
		h := bytes.TrimRight(line, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, _ := bytes.Cut(h, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Connection")):
			keepAlive = bytes.EqualFold(value, []byte("keep-alive")) ||
				(keepAlive && !bytes.EqualFold(value, []byte("close")))
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(value))
		}
	}
	if length > 0 {
		if _, err := r.Discard(length); err != nil {
			return false, false
		}
	}
	return keepAlive, true
}
