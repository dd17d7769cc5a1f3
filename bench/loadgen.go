package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// request is one request of the closed-loop load generator.
type request struct {
	start   time.Duration // since the experiment's start
	latency time.Duration // from dialling to the end of the answer
	ok      bool          // status 200 and no error
}

// closedLoop runs conns clients against address until the context ends or
// until passes, each sending one request per connection (Connection: close)
// and starting the next as soon as the answer has been read. Latency covers
// connect, accept-queue wait and answer. It returns every request started,
// in no particular order.
func closedLoop(ctx context.Context, address, path string, conns int, t0, until time.Time) []request {
	var mu sync.Mutex
	var all []request
	var wg sync.WaitGroup
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	for range conns {
		wg.Go(func() {
			var mine []request
			for ctx.Err() == nil && time.Now().Before(until) {
				mine = append(mine, oneRequest(address, req, t0))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return all
}

// oneRequest sends req on a new connection and reads the whole answer,
// within 20 seconds.
func oneRequest(address string, req []byte, t0 time.Time) request {
	start := time.Now()
	r := request{start: start.Sub(t0)}
	conn, err := net.DialTimeout("tcp", address, 10*time.Second)
	if err == nil {
		_ = conn.SetDeadline(start.Add(20 * time.Second))
		var answer []byte
		if _, err = conn.Write(req); err == nil {
			answer, err = io.ReadAll(io.LimitReader(conn, 64*1024))
		}
		conn.Close()
		r.ok = err == nil && bytes.HasPrefix(answer, []byte("HTTP/1.1 200 "))
	}
	r.latency = time.Since(start)
	return r
}
