package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLine is the longest config file line, newline included.
const maxLine = 64 << 10

// entry is one "key = value" line of a config file.
type entry struct {
	key, value string
	line       int
}

// parseFile reads a config file: blank lines and lines starting with # are
// skipped; every other line is key = value. It returns an *Error naming the
// line for a line without "=" or longer than maxLine (with the key if the
// line has one), and an *Error naming the file if it cannot be read.
func parseFile(name string, r io.Reader) ([]entry, error) {
	var entries []entry
	br := bufio.NewReaderSize(r, maxLine)
	for n := 1; ; n++ {
		raw, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, longLine(name, n, raw)
		case err != nil && !errors.Is(err, io.EOF):
			return nil, &Error{File: name, Line: n, Err: err}
		}
		if e, ok, perr := parseLine(name, n, string(raw)); perr != nil {
			return nil, perr
		} else if ok {
			entries = append(entries, e)
		}
		if err != nil {
			return entries, nil
		}
	}
}

// parseLine parses line n. It returns false for a blank or comment line,
// and an *Error for a line without "=".
func parseLine(name string, n int, raw string) (entry, bool, error) {
	line := strings.TrimSpace(raw)
	if line == "" || strings.HasPrefix(line, "#") {
		return entry{}, false, nil
	}
	key, value, ok := strings.Cut(line, "=")
	if !ok {
		return entry{}, false, &Error{File: name, Line: n, Err: fmt.Errorf("want key = value, got %q", clip(line))}
	}
	return entry{key: strings.TrimSpace(key), value: strings.TrimSpace(value), line: n}, true, nil
}

// longLine is the error for line n, of which head is the first maxLine
// bytes: it names the key if head has one.
func longLine(name string, n int, head []byte) error {
	err := fmt.Errorf("line longer than %d KiB", maxLine>>10)
	if key, _, ok := bytes.Cut(head, []byte("=")); ok {
		return &Error{File: name, Line: n, Key: string(bytes.TrimSpace(key)), Err: err}
	}
	return &Error{File: name, Line: n, Err: err}
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
