package prefork

import (
	"bytes"
	"fmt"
	"time"

	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// AcceptFilter says when a connection is ready for a child, named as
// Apache's AcceptFilter: at once (FilterNone), once bytes have arrived
// (FilterData), or once a whole HTTP request head has (FilterHTTP). With
// FilterData or FilterHTTP in dispatch mode the master accepts and holds
// connections itself until they are ready, then hands them to a child
// (handoff.go); in exclusive and shared mode FilterData is the kernel's
// TCP_DEFER_ACCEPT, and FilterHTTP is refused.
type AcceptFilter uint8

const (
	FilterNone AcceptFilter = iota // a child gets the connection as soon as it is queued
	FilterData                     // ... once bytes have arrived
	FilterHTTP                     // ... once a request head is complete, or HeadLimit bytes came
)

var filterNames = []string{"none", "data", "http"}

func (f AcceptFilter) String() string {
	if int(f) < len(filterNames) {
		return filterNames[f]
	}
	return fmt.Sprintf("filter(%d)", uint8(f))
}

// ParseFilter returns the filter named s, or an error listing the names.
func ParseFilter(s string) (AcceptFilter, error) {
	for i, name := range filterNames {
		if s == name {
			return AcceptFilter(i), nil
		}
	}
	return 0, fmt.Errorf("%q: must be none, data or http", s)
}

// HeadLimit is how many bytes the http filter looks at: a connection whose
// first HeadLimit bytes hold no empty line is handed over anyway, for the
// child to refuse (the built-in handler answers 431 at this size).
const HeadLimit = 32 << 10

// ready reports whether head, the bytes a connection has sent so far
// (peeked, not read), makes it ready under f. from is where the previous
// look ended: the http filter scans only what is new, and the bytes just
// before it, for the empty line that ends a head (CRLF CRLF, or LF LF as
// lenient servers accept).
func (f AcceptFilter) ready(head []byte, from int) bool {
	switch {
	case f == FilterData || len(head) >= HeadLimit:
		return len(head) > 0
	case f != FilterHTTP:
		return true
	}
	from = max(from-2, 0)
	rest := head[from:]
	return bytes.Contains(rest, []byte("\n\r\n")) || bytes.Contains(rest, []byte("\n\n"))
}

// holds reports whether the master holds connections under cfg: a filter
// in dispatch mode.
func (c Config) holds() bool { return c.Filter != FilterNone && c.Mode == protocol.Dispatch }

// deferAccept sets TCP_DEFER_ACCEPT on fd: the kernel queues a connection
// only once data has arrived, or after about timeout, what the data filter
// is in exclusive and shared mode, where the master does not accept. A
// socket that is not TCP is left as it is.
func deferAccept(fd int, timeout time.Duration) error {
	if _, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err != nil {
		return nil
	}
	secs := int(max((timeout+time.Second-1)/time.Second, 1))
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, secs); err != nil {
		return fmt.Errorf("TCP_DEFER_ACCEPT: %w", err)
	}
	return nil
}
