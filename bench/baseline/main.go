// Command baseline is the reference server of the actd benchmark suite: the
// plainest prefork server there is.
//
// The parent opens one TCP listening socket and re-executes itself as
// -children copies that each run a blocking accept(2) loop on that socket
// and answer every HTTP request with "slot=K pid=P\n", honouring keep-alive.
// A blocking accept wakes exactly one waiting child per connection, so there
// is no thundering herd and no supervisor on the connection path: what is
// left is the cost of the kernel and of answering. actd's accept modes are
// measured against it. Connections are served with plain read(2) and
// write(2); with -netconn each is wrapped in a Go net.Conn instead, as
// a Go worker built on actd's worker.Serve gets it, which shows the cost of
// Go's network layer.
//
// With -worker it is an actd worker instead (`actd -- baseline -worker
// fd`): the same answers through actd's Go worker library, by ServeFD, Serve
// or net/http on Listener, which shows what each path costs.
//
// With -inetd it serves exactly one connection, already accepted, on fd 3
// when LISTEN_FDS=1 (systemd-socket-activate --accept) or else on fd 0
// (inetd), and exits.
//
// The parent forwards SIGTERM and SIGINT to its children and exits when they
// have; children die with their parent (Pdeathsig).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// childEnv marks a re-executed child and carries its slot number.
const childEnv = "BASELINE_SLOT"

// listenerFD is the fd at which a child finds the shared listening socket.
const listenerFD = 3

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "TCP address to listen on")
	children := flag.Int("children", 4, "number of children, each in a blocking accept loop")
	delay := flag.Duration("delay", 0, "sleep this long before answering each request")
	inetd := flag.Bool("inetd", false, "serve one accepted connection on fd 3 (LISTEN_FDS=1) or fd 0, then exit")
	netConn := flag.Bool("netconn", false, "serve each accepted connection through a Go net.Conn instead of plain system calls")
	asWorker := flag.String("worker", "", "run as an actd worker through prefork/worker: fd (ServeFD), conn (Serve) or http (net/http on Listener)")
	flag.Parse()

	var err error
	switch {
	case *asWorker != "":
		err = runWorker(*asWorker, *delay)
	case *inetd:
		err = serveInetd(*delay)
	case os.Getenv(childEnv) != "":
		err = runChild(os.Getenv(childEnv), *delay, *netConn)
	default:
		err = runParent(*listen, *children)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

// serveInetd serves the one connection this process was started for.
// It returns nil once the peer closed or asked to close.
func serveInetd(delay time.Duration) error {
	fd := 0
	if os.Getenv("LISTEN_FDS") == "1" {
		fd = listenerFD
	}
	return serveConn(fdConn(fd), "0", delay)
}
