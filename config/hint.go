package config

import (
	"flag"
	"fmt"
	"strings"

	"github.com/actd/actd/internal/nearest"
)

// unknownFlag is the *UsageError for flag name (as the flag package gives
// it, without dashes), written as typed ("-v", "--max-kids") and with what
// was probably meant: actd --version for -v, -V or a --version after other
// flags, else the flag of fs within two edits of name, or the one flag that
// starts with name.
func unknownFlag(fs *flag.FlagSet, name string) error {
	shown := "--" + quoteKey(name)
	if len(name) == 1 {
		shown = "-" + quoteKey(name)
	}
	switch name {
	case "v", "V", "version":
		return &UsageError{Err: fmt.Errorf("unknown flag %s: for the version run actd --version (alone) or actd version", shown)}
	}
	if meant := meantFlag(fs, name); meant != "" {
		return &UsageError{Err: fmt.Errorf("unknown flag %s: did you mean %s?", shown, meant)}
	}
	return &UsageError{Err: fmt.Errorf("unknown flag %s", shown)}
}

// meantFlag returns the flag a mistyped name probably meant, with its
// dashes, or "".
func meantFlag(fs *flag.FlagSet, name string) string {
	var names, prefixed []string
	fs.VisitAll(func(f *flag.Flag) {
		names = append(names, f.Name)
		if strings.HasPrefix(f.Name, name) {
			prefixed = append(prefixed, f.Name)
		}
	})
	if len(name) > 2 {
		if near := nearest.Word(name, names, 2); near != "" {
			return "--" + near
		}
	}
	if len(prefixed) == 1 && len(name) > 2 {
		return "--" + prefixed[0]
	}
	return ""
}
