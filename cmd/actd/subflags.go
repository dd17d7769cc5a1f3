package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/actd/actd/config"
)

// subcommandFlags parses args with fs, the flags of `actd NAME` (fs.Name()
// is "actd NAME"), whose synopsis is the usage line after "actd NAME".
// It returns true and the exit status when the subcommand is done: 0 after
// printing the usage for --help (stdout), 64 after an error and the usage
// (stderr); else false.
func subcommandFlags(fs *flag.FlagSet, args []string, synopsis string) (int, bool) {
	fs.SetOutput(io.Discard)
	err := config.ParseFlags(fs, args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		subcommandUsage(os.Stdout, fs, synopsis)
		return exitOK, true
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n\n", fs.Name(), err)
	subcommandUsage(os.Stderr, fs, synopsis)
	return exitUsage, true
}

// subcommandUsage writes the usage of a subcommand to w: its synopsis and
// its flags, with two dashes, one a line.
func subcommandUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(w, "usage: %s %s\n\n", fs.Name(), synopsis)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", f.Name, arg, usage)
	})
	tw.Flush()
}
