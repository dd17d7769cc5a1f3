// Command go-http is a net/http server run unchanged under actd: the usual
// http.Server, with worker.Listener in place of net.Listen. It answers every
// request with the serving child's slot and PID, keeping connections alive
// as HTTP/1.1 does; /sleep?d=DURATION answers after sleeping that long.
//
//	go build -o /tmp/go-http ./examples/go-http
//	actd --listen 127.0.0.1:8080 -- /tmp/go-http
//	curl http://127.0.0.1:8080/hello    # go-http slot=0 pid=1234 path=/hello
//
// worker.Requests reports each request's method and path to the master, so
// `actd status` shows what a busy child is serving. Run by hand, outside
// actd, it says it was not started by actd and exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/actd/actd/prefork/worker"
)

func main() {
	l, err := worker.Listener()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-http:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", answer)
	srv := &http.Server{
		Handler: worker.Requests(mux),
		// A child serves one connection at a time and is busy until the
		// connection closes, so an idle keep-alive client must not hold
		// it long, nor a slow one.
		IdleTimeout:       2 * time.Second,
		ReadHeaderTimeout: 5 * time.Second,
		// The head limit every actd worker keeps (431 beyond it); Requests
		// adds the field count and the body limit.
		MaxHeaderBytes: worker.MaxHeaderBytes,
	}
	// In shared mode there is no back-channel: SIGTERM stops the child.
	go func() {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	// Serve returns after a drain order or the master's end, once the
	// connection in hand is closed: Accept's error wraps net.ErrClosed.
	err = srv.Serve(l)
	if !errors.Is(err, net.ErrClosed) && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "go-http %d: %v\n", os.Getpid(), err)
		os.Exit(1)
	}
}

// answer names the child; with ?d=DURATION it sleeps that long first.
func answer(w http.ResponseWriter, r *http.Request) {
	if d, err := time.ParseDuration(r.URL.Query().Get("d")); err == nil && d > 0 {
		time.Sleep(min(d, 10*time.Second))
	}
	fmt.Fprintf(w, "go-http slot=%s pid=%d path=%s\n", os.Getenv("ACTD_SLOT"), os.Getpid(), r.URL.Path)
}
