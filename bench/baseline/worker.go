package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/actd/actd/prefork/worker"
)

// Ways to serve as an actd worker (-worker), each through a path of actd's
// Go worker library (prefork/worker), answering as the baseline does.
const (
	workerFD   = "fd"   // worker.ServeFD: the blocking socket fd, plain read/write
	workerConn = "conn" // worker.Serve: a net.Conn
	workerHTTP = "http" // net/http's Server on worker.Listener
)

// runWorker serves as an actd child, the way how names, until the master
// drains it or is gone. It returns an error for an unknown way, or the
// library's error.
func runWorker(how string, delay time.Duration) error {
	slot := os.Getenv("ACTD_SLOT")
	ctx := context.Background()
	serve := func(c interface {
		Read([]byte) (int, error)
		Write([]byte) (int, error)
	}) {
		if err := serveConn(c, slot, delay); err != nil && !errors.Is(err, net.ErrClosed) {
			fmt.Fprintf(os.Stderr, "worker %s: %v\n", slot, err)
		}
	}
	switch how {
	case workerFD:
		return worker.ServeFD(ctx, func(fd int) { serve(fdConn(fd)) })
	case workerConn:
		return worker.Serve(ctx, func(c net.Conn) { serve(c) })
	case workerHTTP:
		return serveHTTP(slot, delay)
	}
	return fmt.Errorf("-worker %q: want %s, %s or %s", how, workerFD, workerConn, workerHTTP)
}

// serveHTTP runs net/http on worker.Listener with a handler that answers
// as serveConn does. It returns nil after a drain.
func serveHTTP(slot string, delay time.Duration) error {
	l, err := worker.Listener()
	if err != nil {
		return err
	}
	body := []byte("slot=" + slot + " pid=" + strconv.Itoa(os.Getpid()) + "\n")
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if delay > 0 {
				time.Sleep(delay)
			}
			w.Header().Set("Content-Type", "text/plain")
			w.Write(body)
		}),
		IdleTimeout: 5 * time.Second,
	}
	if err := srv.Serve(l); !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
