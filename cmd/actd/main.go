// Command actd is a prefork process supervisor for servers run by systemd.
//
//	actd [flags] [-- COMMAND [ARGS...]]      run a pool
//	actd status [--json] [NAME]              scoreboard of a running pool
//	actd check-config FILE                   validate a config file
//	actd version
//
// See docs/architecture.md and docs/operations.md.
package main

import (
	"fmt"
	"os"
)

var version = "dev"

// Exit statuses, from sysexits.h as spamd uses them.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 64 // EX_USAGE: malformed command line
	exitOSErr    = 71 // EX_OSERR: the system failed us (no sockets, epoll)
	exitConfig   = 78 // EX_CONFIG: a setting is out of range
	childCommand = "child"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case childCommand:
			return runChild(args[1:])
		case "status":
			return runStatus(args[1:])
		case "reload":
			return runReload(args[1:])
		case "check-config":
			return runCheckConfig(args[1:])
		case "version", "--version":
			fmt.Println("actd", version)
			return exitOK
		case "run":
			args = args[1:]
		}
	}
	return runMaster(args)
}
