package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// intValue is an int flag whose errors say what is wanted. A number too
// large for an int is kept as math.MaxInt (math.MinInt if negative) and its
// text remembered in over, so validation can name the allowed range and the
// value as given.
type intValue struct {
	p    *int
	name string
	over map[string]string
}

func (v intValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

// Set parses s. It returns an error quoting s if s is not a whole number.
func (v intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 0)
	switch {
	case errors.Is(err, strconv.ErrRange):
		*v.p = math.MaxInt
		if n < 0 {
			*v.p = math.MinInt
		}
		v.over[v.name] = s
		return nil
	case err != nil:
		return fmt.Errorf("%q: want a whole number like 8", s)
	}
	*v.p = int(n)
	delete(v.over, v.name)
	return nil
}

// durationValue is a time.Duration flag whose error says what is wanted.
type durationValue struct{ p *time.Duration }

func (v durationValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

// Set parses s. It returns an error quoting s if s is not a Go duration.
func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q: want a duration like 5s, 500ms or 1m30s", s)
	}
	*v.p = d
	return nil
}
