package config

import (
	"fmt"
	"strconv"
)

// boolValue is an on/off flag: given alone it means true; with a value (the
// flag's "=" or the file's "key = value") it reads true/false, 1/0, t/f.
type boolValue struct{ p *bool }

func (v boolValue) String() string {
	if v.p == nil {
		return "false"
	}
	return strconv.FormatBool(*v.p)
}

// Set parses s. It returns an error quoting s if s is not a boolean.
func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q: want true or false", s)
	}
	*v.p = b
	return nil
}

// IsBoolFlag lets the flag stand alone on the command line.
func (v boolValue) IsBoolFlag() bool { return true }
