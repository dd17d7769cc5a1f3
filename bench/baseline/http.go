package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"
)

// maxRequest bounds the size of one request head.
const maxRequest = 8192

// serveConn answers HTTP/1.x requests on conn until the client closes,
// asks to close (Connection: close, or HTTP/1.0 without keep-alive), or
// sends a head larger than maxRequest. Every answer is "slot=K pid=P\n",
// sent after sleeping delay. It returns nil when the connection ends
// normally and the read or write error otherwise; the caller closes conn.
func serveConn(conn io.ReadWriter, slot string, delay time.Duration) error {
	body := fmt.Sprintf("slot=%s pid=%d\n", slot, os.Getpid())
	buf := make([]byte, 0, maxRequest)
	chunk := make([]byte, 4096)
	for {
		end := bytes.Index(buf, []byte("\r\n\r\n"))
		if end < 0 {
			if len(buf) >= maxRequest {
				return fmt.Errorf("request head over %d bytes", maxRequest)
			}
			n, err := conn.Read(chunk)
			if n <= 0 {
				if err == io.EOF {
					return nil
				}
				return err
			}
			buf = append(buf, chunk[:n]...)
			continue
		}
		keepAlive := wantsKeepAlive(buf[:end])
		buf = append(buf[:0], buf[end+4:]...)
		if delay > 0 {
			time.Sleep(delay)
		}
		if _, err := conn.Write(response(body, keepAlive)); err != nil || !keepAlive {
			return err
		}
	}
}

// wantsKeepAlive reports whether the request head asks to keep the
// connection open: HTTP/1.1 unless "Connection: close", HTTP/1.0 only with
// "Connection: keep-alive".
func wantsKeepAlive(head []byte) bool {
	lower := bytes.ToLower(head)
	firstLine, _, _ := bytes.Cut(lower, []byte("\r\n"))
	if bytes.HasSuffix(firstLine, []byte("http/1.0")) {
		return bytes.Contains(lower, []byte("\r\nconnection: keep-alive"))
	}
	return !bytes.Contains(lower, []byte("\r\nconnection: close"))
}

// response builds the complete HTTP/1.1 answer carrying body.
func response(body string, keepAlive bool) []byte {
	conn := "keep-alive"
	if !keepAlive {
		conn = "close"
	}
	return []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: " + conn + "\r\n\r\n" + body)
}

// fdConn reads and writes a blocking socket with plain system calls, as a
// C prefork server does: no Go netpoller on the connection.
type fdConn int

// Read reads once, retrying on EINTR. It returns io.EOF at end of stream.
func (c fdConn) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(int(c), b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of b, retrying on EINTR. It returns the bytes written
// and the first error.
func (c fdConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := syscall.Write(int(c), b[done:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}
