// Command go-worker is a small actd worker written in Go: a tiny HTTP
// responder that answers every request with the serving child's slot and
// PID. prefork/worker does the protocol; this file is the whole program.
//
// Run it under actd, in dispatch (the default) or exclusive mode:
//
//	go build -o /tmp/go-worker ./examples/go-worker
//	actd --listen 127.0.0.1:8080 -- /tmp/go-worker
//	actd --listen 127.0.0.1:8080 --accept exclusive -- /tmp/go-worker
//	curl http://127.0.0.1:8080/hello    # go-worker slot=0 pid=1234 path=/hello
//
// Every actd child execs /tmp/go-worker in place with the listeners at fds
// 3.. and the back-channel at ACTD_CHANNEL_FD; worker.Serve finds them there.
// Run by hand, outside actd, it says it was not started by actd and exits 1.
package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/actd/actd/prefork/worker"
)

// requestTimeout bounds one connection: a prefork child serves one at a
// time, so a slow client must not hold it long.
const requestTimeout = 5 * time.Second

func main() {
	// SIGTERM or SIGINT (Ctrl-C reaches the whole process group) end Serve
	// like a drain order does: after the connection in hand.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := worker.Serve(ctx, answer); err != nil {
		fmt.Fprintf(os.Stderr, "go-worker %d: %v\n", os.Getpid(), err)
		os.Exit(1)
	}
}

// answer reads one HTTP request and answers it, HTTP/1.0 style: one
// request per connection. Serve closes the connection when answer returns.
func answer(c net.Conn) {
	c.SetDeadline(time.Now().Add(requestTimeout))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return // the client went away or sent no HTTP
	}
	body := fmt.Sprintf("go-worker slot=%s pid=%d path=%s\n", os.Getenv("ACTD_SLOT"), os.Getpid(), req.URL.Path)
	fmt.Fprintf(c, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		len(body), body)
}
