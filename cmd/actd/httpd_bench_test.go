package main

import (
	"bufio"
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkHandlerKeepAlive: wrk-like keep-alive requests through the
// built-in handler over a unix socketpair; allocs/op must stay 0.
func BenchmarkHandlerKeepAlive(b *testing.B) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fds[0])
	done := make(chan struct{})
	h := httpHandler(0, "")
	go func() {
		h(fds[1], false)
		unix.Close(fds[1])
		close(done)
	}()
	req := []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n")
	buf := make([]byte, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := unix.Write(fds[0], req); err != nil {
			b.Fatal(err)
		}
		if n, err := unix.Read(fds[0], buf); err != nil || !bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 200")) {
			b.Fatalf("answer %q, %v", buf[:n], err)
		}
	}
	b.StopTimer()
	unix.Shutdown(fds[0], unix.SHUT_WR)
	<-done
}

// repeatReader returns b over and over.
type repeatReader struct {
	b []byte
	i int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.i:])
	r.i = (r.i + n) % len(r.b)
	return n, nil
}

// BenchmarkReadRequest: the parse alone of a wrk-like request, no sockets.
func BenchmarkReadRequest(b *testing.B) {
	req := []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n")
	r := bufio.NewReaderSize(&repeatReader{b: req}, 8192)
	b.ReportAllocs()
	for b.Loop() {
		readRequest(r, nil)
	}
}
