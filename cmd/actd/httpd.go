package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"strconv"
	"time"
)

// keepAliveIdle bounds how long the built-in handler waits for the next
// request on a kept-alive connection: a prefork child serves one connection
// at a time, so an idle client must not hold it long.
const keepAliveIdle = 5 * time.Second

// httpHandler returns the built-in handler: a minimal HTTP/1.x responder
// that answers every request with "slot=K pid=P\n" after waiting delay,
// keeping the connection open as HTTP/1.1 allows.
func httpHandler(delay time.Duration) func(net.Conn) {
	body := []byte("slot=" + os.Getenv("ACTD_SLOT") + " pid=" + strconv.Itoa(os.Getpid()) + "\n")
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	keep := append([]byte(head+"\r\n"), body...)
	closing := append([]byte(head+"Connection: close\r\n\r\n"), body...)
	return func(c net.Conn) {
		r := bufio.NewReaderSize(c, 4096)
		for {
			c.SetReadDeadline(time.Now().Add(keepAliveIdle))
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
			if _, err := c.Write(resp); err != nil || !again {
				return
			}
		}
	}
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
