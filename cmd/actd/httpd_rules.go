package main

import "bytes"

// requestRules is what the built-in handler applies to a request beyond
// its framing: the body limit (--max-request-body) and the headers the
// access log prints, kept for it. A nil *requestRules has no limit and
// keeps nothing.
type requestRules struct {
	maxBody int64    // -1: no limit
	names   []string // header names kept (the access log's %{Name}i)
	values  []string // their values in the request in hand, "" for absent
}

// newRules returns the rules for maxBody (-1: none) and the header names
// to keep.
func newRules(maxBody int64, names []string) *requestRules {
	return &requestRules{maxBody: maxBody, names: names, values: make([]string, len(names))}
}

// reset forgets the kept headers, before a request.
func (r *requestRules) reset() {
	clear(r.values)
}

// bodyLimit returns the largest body, -1 for none.
func (r *requestRules) bodyLimit() int {
	if r == nil || r.maxBody < 0 {
		return -1
	}
	return int(r.maxBody)
}

// overBody reports whether a Content-Length of n is over the limit.
func (r *requestRules) overBody(n int) bool {
	return r != nil && r.maxBody >= 0 && int64(n) > r.maxBody
}

// header keeps value if name is one of the kept headers (the first of
// several with one name).
func (r *requestRules) header(name, value []byte) {
	if r == nil {
		return
	}
	for i, n := range r.names {
		if r.values[i] == "" && bytes.EqualFold(name, []byte(n)) {
			r.values[i] = string(value)
		}
	}
}

// value returns the kept header name's value, "" if absent or not kept.
func (r *requestRules) value(name string) string {
	for i, n := range r.names {
		if n == name {
			return r.values[i]
		}
	}
	return ""
}
