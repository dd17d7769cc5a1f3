package config

import (
	"flag"
	"fmt"
	"io"

	"github.com/actd/actd/prefork"
)

// Usage writes the flag list to w, one flag a line as the docs write them:
// "--max-children N", its meaning and its default.
func Usage(w io.Writer) {
	fs, _ := newFlagSet(&Config{Pool: prefork.DefaultConfig(), Handler: "http", LogFormat: "auto"})
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		switch f.Value.(type) {
		case intValue:
			arg = "N"
		case durationValue:
			arg = "D"
		}
		if arg == "value" {
			arg = "VALUE"
		}
		line := fmt.Sprintf("  --%s %s", f.Name, arg)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%-28s %s\n", line, usage)
	})
}
