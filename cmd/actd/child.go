package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/actd/actd/prefork/worker"
)

// The hidden child subcommand. The master starts every child as
//
//	/proc/self/exe child http DELAY          the built-in HTTP handler
//	/proc/self/exe child inetd -- ARGV...    --exec: ARGV per connection
//	/proc/self/exe child exec -- ARGV...     COMMAND: exec ARGV in place
//
// with argv[0] "actd-child", so ps shows what each process is.
const childArgv0 = "actd-child"

// childArgs returns the child command line for a worker.
func childArgs(delay time.Duration, files string, inetd, command []string) []string {
	switch {
	case len(command) > 0:
		return append([]string{childArgv0, childCommand, "exec", "--"}, command...)
	case len(inetd) > 0:
		return append([]string{childArgv0, childCommand, "inetd", "--"}, inetd...)
	}
	args := []string{childArgv0, childCommand, "http", delay.String()}
	if files != "" {
		args = append(args, files)
	}
	return args
}

func runChild(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "actd child: started by the master only")
		return exitUsage
	}
	var err error
	switch {
	case args[0] == "exec" && len(args) > 2:
		err = worker.ExecProgram(args[2:])
	case args[0] == "inetd" && len(args) > 2:
		err = serveChild(func(ctx context.Context) error { return worker.ServeFD(ctx, worker.Inetd(args[2:])) })
	case args[0] == "http" && (len(args) == 2 || len(args) == 3):
		var delay time.Duration
		files := ""
		if len(args) == 3 {
			files = args[2]
		}
		if delay, err = time.ParseDuration(args[1]); err == nil {
			err = serveChild(func(ctx context.Context) error {
				return worker.ServeKeepFDTLS(ctx, httpHandler(delay, files), httpsHandler(delay, files), worker.ReadsHeader)
			})
		}
	default:
		err = fmt.Errorf("unknown child command %q", args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "actd child %d: %v\n", os.Getpid(), err)
		return exitFailure
	}
	return exitOK
}

// serveChild serves until drained or orphaned. SIGTERM and SIGINT (from a
// terminal or an operator) count as a drain: the connection in hand is
// finished first.
func serveChild(serve func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return serve(ctx)
}
