package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
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

// sizeValue is a byte size flag: a whole number with an optional K, M or G
// suffix (powers of 1024, as systemd's MemoryMax= reads them).
type sizeValue struct{ p *uint64 }

// String returns the size as Set reads it, in the largest unit that
// divides it (1048576 is 1M).
func (v sizeValue) String() string {
	if v.p == nil || *v.p == 0 {
		return "0"
	}
	n := *v.p
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "G"}, {20, "M"}, {10, "K"}} {
		if n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10)
}

// Set parses s. It returns an error quoting s if s is not a size, or is one
// too large for 64 bits.
func (v sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return fmt.Errorf("%q: want a size like 512M, 2G or 800000K", s)
	}
	*v.p = n
	return nil
}

// parseSize reads a size such as 300M: digits and an optional K, M or G.
func parseSize(s string) (uint64, error) {
	shift := 0
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		shift = 10
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		shift = 20
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		shift = 30
	}
	digits := s
	if shift > 0 {
		digits = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, err
	}
	if n > math.MaxUint64>>shift {
		return 0, strconv.ErrRange
	}
	return n << shift, nil
}

// modeValue is a file's permission bits in octal, as chmod(1) and
// systemd's SocketMode= write them: 0660, 660 or 0o660.
type modeValue struct{ p *fs.FileMode }

func (v modeValue) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return fmt.Sprintf("%04o", uint32(*v.p))
}

// Set parses s. It returns an error quoting s if s is not octal or has
// more than the permission bits (0 to 0777).
func (v modeValue) Set(s string) error {
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O"), 8, 32)
	if err != nil || n > 0o777 {
		return fmt.Errorf("%q: want permission bits in octal, 0 to 0777, such as 0660", s)
	}
	*v.p = fs.FileMode(n)
	return nil
}
