// Package acceptfilter says when a connection is ready for a child, named
// as Apache's AcceptFilter: at once (None), once bytes have arrived (Data),
// or once a whole HTTP request head has, or bytes no worker would wait on
// (HTTP: the framing rules of docs/http.md, which every actd worker kind
// keeps, with the head and line limits here). It is the policy only: a
// pure function of the bytes a client sent so far. The master's holder
// (prefork/hold.go) peeks those bytes and applies it; in exclusive and
// shared mode Data is the kernel's TCP_DEFER_ACCEPT, and HTTP is refused.
package acceptfilter

import "fmt"

// Filter is one accept filter. The zero value is None.
type Filter uint8

const (
	None Filter = iota // a child gets the connection as soon as it is queued
	Data               // ... once bytes have arrived
	HTTP               // ... once a request head is complete or cannot become so (docs/http.md)
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

// Ready reports whether head, the bytes a connection has sent so far
// (peeked, not read), makes it ready under f. from is where the previous
// look ended (0 for the first). Under None every connection is ready; under
// Data one that sent a byte; under HTTP one whose head is complete or can
// no longer be (headReady, docs/http.md): any worker answers it at once,
// so the master never hands over what a worker would wait on, nor holds
// what a worker would refuse.
func (f Filter) Ready(head []byte, from int) bool {
	switch f {
	case None:
		return true
	case HTTP:
		return headReady(head, from)
	}
	return len(head) > 0
}
