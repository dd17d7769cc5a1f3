// Command actd is a prefork process supervisor for servers run by systemd.
//
//	actd [flags] [-- COMMAND [ARGS...]]      run a pool
//	actd [flags] /path/to/COMMAND [ARGS...]  the same: a path needs no --
//	actd status [--json] [NAME]              scoreboard of a running pool
//	actd reload [NAME]                       reload; wait until the new generation serves alone
//	actd check-config FILE                   validate a config file
//	actd version                             also --version
//	actd help                                also --help, -h
//
// See docs/architecture.md and docs/operations.md.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/actd/actd/config"
	"github.com/actd/actd/internal/nearest"
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

// command is one subcommand: `actd NAME ARGS`.
type command struct {
	name, args, summary string
	run                 func(args []string) int
}

// commands is the subcommand table, in the order usage lists them. Running
// a pool needs none: it is `actd [flags]`. (Set in init: usage, which some
// commands print, reads it.)
var commands []command

func init() {
	commands = []command{
		{"status", "[--json] [--control-socket PATH] [NAME]", "print the scoreboard of a running pool", runStatus},
		{"reload", "[--control-socket PATH] [NAME]", "reload a running pool; wait until the new generation serves alone (old children exited or finishing their last connection), or say why not", runReload},
		{"check-config", "FILE", "check a config file as a start would, run nothing", runCheckConfig},
		{"version", "", "print the version (also --version)", runVersion},
	}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches the command line: a subcommand, help, the version, or
// (flags, a path, or nothing under socket activation) a pool.
func run(args []string) int {
	if len(args) == 0 {
		if os.Getenv("LISTEN_FDS") != "" {
			return runMaster(args) // socket activation, built-in handler
		}
		fmt.Fprint(os.Stderr, "actd: nothing to run: give flags such as --config FILE or --listen ADDR (without them, actd runs only under socket activation)\n\n")
		usage(os.Stderr)
		return exitUsage
	}
	switch first := args[0]; {
	case first == childCommand:
		return runChild(args[1:])
	case first == "help" || first == "-h" || first == "-help" || first == "--help":
		usage(os.Stdout)
		return exitOK
	case first == "--version" || first == "-version":
		return runVersion(args[1:])
	case first == "run":
		return runMaster(args[1:])
	case strings.HasPrefix(first, "-") || strings.Contains(first, "/"):
		return runMaster(args)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:])
		}
	}
	return unknownCommand(args[0])
}

func runVersion([]string) int {
	fmt.Println("actd", version)
	return exitOK
}

// unknownCommand refuses a word that is no subcommand, suggesting the
// nearest one.
func unknownCommand(name string) int {
	msg := fmt.Sprintf("actd: unknown command %q", name)
	if near := nearestCommand(name); near != "" {
		msg += fmt.Sprintf(": did you mean %s?", near)
	}
	fmt.Fprintln(os.Stderr, msg)
	fmt.Fprintln(os.Stderr, "A worker program goes after -- (actd [flags] -- PROGRAM [ARGS...]) or is a path (./PROGRAM). See actd --help.")
	return exitUsage
}

// usage writes the synopsis, the subcommands and the flags of a pool to w.
func usage(w io.Writer) {
	fmt.Fprint(w, `usage: actd [flags] [-- COMMAND [ARGS...]]
       actd [flags] /path/to/COMMAND [ARGS...]
       actd SUBCOMMAND [ARGS...]

Runs a prefork pool of COMMAND (or of the built-in HTTP handler) on the
sockets systemd passes or on --listen. A worker COMMAND follows -- or is a
path (has a /); any other bare word must be a subcommand.

subcommands:
`)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s %s\t%s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintf(tw, "  help\tprint this text (also --help, -h)\n")
	tw.Flush()
	fmt.Fprint(w, "\nflags (each also a key of the --config file):\n")
	config.Usage(w)
}

// nearestCommand returns the subcommand within two edits of name (a typo),
// or "".
func nearestCommand(name string) string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return nearest.Word(name, names, 2)
}
