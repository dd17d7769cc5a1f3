package config

import (
	"fmt"
	"strconv"
)

// Error is a bad setting. Key is the flag or file key, File and Line say
// where it came from (empty and 0 for the command line).
type Error struct {
	Key  string
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	where := ""
	if e.File != "" {
		where = e.File
		if e.Line > 0 {
			where += fmt.Sprintf(":%d", e.Line)
		}
		where += ": "
	}
	if e.Key == "" {
		return where + e.Err.Error()
	}
	return fmt.Sprintf("%s%s: %v", where, quoteKey(e.Key), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// quoteKey returns a key or flag name as it is when it is made of letters,
// digits, '-', '_' and '.', and Go-quoted otherwise, so that a key read from
// a file or typed by a user never puts raw bytes on a terminal.
func quoteKey(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return strconv.Quote(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}
