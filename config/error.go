package config

import "fmt"

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
	return fmt.Sprintf("%s%s: %v", where, e.Key, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
