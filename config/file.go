package config

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// entry is one "key = value" line of a config file.
type entry struct {
	key, value string
	line       int
}

// parseFile reads a config file: blank lines and lines starting with # are
// skipped; every other line is key = value. It returns an *Error for a line
// without "=".
func parseFile(name string, r io.Reader) ([]entry, error) {
	var entries []entry
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, &Error{File: name, Line: n, Err: fmt.Errorf("want key = value, got %q", line)}
		}
		entries = append(entries, entry{key: strings.TrimSpace(key), value: strings.TrimSpace(value), line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: name, Err: err}
	}
	return entries, nil
}
