// Package acceptfilter says when a connection is ready for a child, named
// as Apache's AcceptFilter: at once (None), once bytes have arrived (Data),
// or once a whole HTTP request head has (HTTP). It is the policy only: a
// pure function of the bytes a client sent so far. The master's holder
// (prefork/hold.go) peeks those bytes and applies it; in exclusive and
// shared mode Data is the kernel's TCP_DEFER_ACCEPT, and HTTP is refused.
package acceptfilter

import (
	"bytes"
	"fmt"
)

// Filter is one accept filter. The zero value is None.
type Filter uint8

const (
	None Filter = iota // a child gets the connection as soon as it is queued
	Data               // ... once bytes have arrived
	HTTP               // ... once a request head is complete, or HeadLimit bytes came
)

var names = []string{"none", "data", "http"}

// String returns the filter's name as Parse takes it, or "filter(N)" for
// a value that is none of the three.
func (f Filter) String() string {
	if int(f) < len(names) {
		return names[f]
	}
	return fmt.Sprintf("filter(%d)", uint8(f))
}

// Parse returns the filter named s, or an error listing the names.
func Parse(s string) (Filter, error) {
	for i, name := range names {
		if s == name {
			return Filter(i), nil
		}
	}
	return 0, fmt.Errorf("%q: must be none, data or http", s)
}

// HeadLimit is how many bytes the HTTP filter looks at: a connection whose
// first HeadLimit bytes hold no empty line is handed over anyway, for the
// child to refuse (the built-in handler answers 431 at this size).
const HeadLimit = 32 << 10

// Ready reports whether head, the bytes a connection has sent so far
// (peeked, not read), makes it ready under f. from is where the previous
// look ended: the HTTP filter scans only what is new, and the bytes just
// before it, for the empty line that ends a head (CRLF CRLF, or LF LF as
// lenient servers accept). Under None every connection is ready; under
// Data and HTTP an empty head never is.
func (f Filter) Ready(head []byte, from int) bool {
	switch {
	case f == Data || len(head) >= HeadLimit:
		return len(head) > 0
	case f != HTTP:
		return true
	}
	from = max(from-2, 0)
	rest := head[from:]
	return bytes.Contains(rest, []byte("\n\r\n")) || bytes.Contains(rest, []byte("\n\n"))
}
