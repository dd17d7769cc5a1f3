package main

import (
	"bytes"

	"github.com/actd/actd/prefork/worker"
)

// requestText reports the built-in handler's request in hand to the master
// (worker.Report) as its method and path: the request line without the
// query (it may carry secrets) and the version. The text is a new string
// only when the line changes, so a client repeating one request costs no
// allocation.
type requestText struct{ last string }

// seen reports request line line, which parseRequestLine accepted.
func (t *requestText) seen(line []byte) {
	line = line[:len(line)-len(" HTTP/1.1")]
	if i := bytes.IndexByte(line, '?'); i >= 0 {
		line = line[:i]
	}
	if string(line) != t.last {
		t.last = string(line)
	}
	worker.Report(t.last)
}
