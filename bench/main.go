// Command bench is actd's benchmark suite: one command that installs the
// peers, runs every server side by side under the same loads on loopback,
// measures a scaling ramp, and writes docs/benchmarks.md and
// docs/scaling.png.
//
//	go run ./bench            # full run, about 12 minutes, rewrites the docs
//	go run ./bench -quick     # a short smoke run that prints and writes nothing
//	go run ./bench -actd-before DIR  # also runs DIR's actd as actd-*@before; prints only
//	go run ./bench -preload   # only the preload comparison (preload.go); prints only
//	go run ./bench -issue20   # only issue 20's comparison (issue20.go); rewrites only its section
//	go run ./bench -issue21   # only issue 21's slow bodies and readers (issue21.go); rewrites only its section
//	go run ./bench -issue24   # only issue 24's PROXY protocol and TLS costs (issue24.go); rewrites only its section
//
// Servers: actd in dispatch and exclusive mode (built-in HTTP handler), a
// plain N-children blocking-accept Go baseline (bench/baseline), Apache httpd
// with the prefork MPM, gunicorn sync workers, and systemd-socket-activate
// --accept starting a tiny C responder (bench/responder) per connection.
// Every server answers the same tiny body ("slot=K pid=P\n"). Loads come from
// wrk; the ramp uses the suite's own closed-loop load generator.
//
// It needs root only to install packages and to let Apache switch to
// www-data; everything listens on 127.0.0.1 and every load is bounded in
// time.
package main

import (
	"fmt"
	"os"
)

func main() {
	opts, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(64)
	}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
