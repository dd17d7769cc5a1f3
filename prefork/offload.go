package prefork

import (
	"time"
	"unsafe"

	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// Write completion (docs/protocol.md, "Write completion"). A child that
// announced protocol.CapOffload hands the master a connection whose client
// reads its response slowly, with the rest of the response (Write: the
// connection and a data fd, a memfd or a file, from Offset for Length
// bytes). The master sends it with sendfile(2) as the socket becomes
// writable: each such connection is an entry in one table, its fd in the
// loop's epoll set (EPOLLOUT, edge-triggered), no goroutine or timer of its
// own. Sent, it parks the connection (keep-alive, as after a Keep) or
// closes it. A client that takes no byte for --send-timeout is closed, at
// the tick that finds it. Each entry costs two fds, counted in the budget
// of held connections (budget.go).

// sendChunk bounds one sendfile, so one fast client does not hold the loop.
const sendChunk = 1 << 20

// finishing is one response the master finishes.
type finishing struct {
	fd, data   int // the connection and the data; fd -1: a free entry
	listener   int
	off, end   int64 // what is left: the data's bytes [off, end)
	size       int64 // the data handed over, for the memory count
	keep       bool  // park the connection once sent
	registered bool  // in the loop's epoll set
	since      time.Time
	moved      time.Time // the client last took a byte (or since)

	addr string // the client's address from a PROXY header (Write), "" for the socket's peer (proxyhold.go)
}

// sender is the table of responses the master finishes.
type sender struct {
	conns []finishing
	free  []int
	count int
	bytes int64 // data handed over and not yet closed: memory (memfd pages) or file bytes
	left  int64 // of it, not sent yet
	// Responses not taken (beyond --offload-total), waiting for an idle
	// child to write them itself (Unsent), oldest first.
	refused    []finishing
	refusedLog time.Time // when a refusal was last logged
}

// fds returns how many descriptors the sender holds: two per response.
func (s *sender) fds() int { return 2 * (s.count + len(s.refused)) }

// fits reports whether the master takes f: its data and what it holds
// stay within total.
func (s *sender) fits(f finishing, total uint64) bool {
	return uint64(s.bytes+f.size) <= total
}

// add takes a response and returns its entry.
func (s *sender) add(f finishing) int {
	var i int
	if n := len(s.free); n > 0 {
		i, s.free = s.free[n-1], s.free[:n-1]
		s.conns[i] = f
	} else {
		s.conns = append(s.conns, f)
		i = len(s.conns) - 1
	}
	s.count++
	s.bytes += f.size
	s.left += f.end - f.off
	return i
}

// release forgets entry i, closes its data, and returns its connection's
// fd, now the caller's.
func (s *sender) release(i int) int {
	c := &s.conns[i]
	fd := c.fd
	rawClose(c.data)
	s.bytes -= c.size
	s.left -= c.end - c.off
	*c = finishing{fd: -1, data: -1}
	s.count--
	s.free = append(s.free, i)
	return fd
}

// oldest returns when the oldest response was handed over, zero with none.
func (s *sender) oldest() time.Time {
	var t time.Time
	for _, c := range s.conns {
		if c.fd >= 0 && (t.IsZero() || c.since.Before(t)) {
			t = c.since
		}
	}
	return t
}

// sent is what a send found.
type sent uint8

const (
	sendMore sent = iota // the socket is full: wait until it is writable
	sendDone             // all of it went out
	sendFail             // the client is gone, or the data cannot be read
)

// send sends what it can of entry i at now.
func (s *sender) send(i int, now time.Time) sent {
	c := &s.conns[i]
	for c.off < c.end {
		off := c.off
		n, err := rawSendfile(c.fd, c.data, &off, int(min(c.end-c.off, sendChunk)))
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return sendMore
		case err != nil || n == 0: // n 0: the data is shorter than the child said
			return sendFail
		}
		c.off += int64(n)
		s.left -= int64(n)
		c.moved = now
	}
	return sendDone
}

// rawSendfile is sendfile(2) from file at *off (which it advances; the
// file's own offset stays), on a non-blocking socket.
func rawSendfile(sock, file int, off *int64, n int) (int, error) {
	r, _, errno := unix.RawSyscall6(unix.SYS_SENDFILE, uintptr(sock), uintptr(file),
		uintptr(unsafe.Pointer(off)), uintptr(n), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// finishOf returns the entry for a Write m from a child, with its
// connection fd and data fd, and false if no master would take it (Length
// beyond the largest OffloadMax, or an offset past 2^62).
func finishOf(m protocol.Message, fd, data int, now time.Time) (finishing, bool) {
	if m.Length > maxOffload || m.Offset > 1<<62 {
		return finishing{}, false
	}
	off := int64(m.Offset)
	return finishing{fd: fd, data: data, listener: int(m.Listener), off: off, end: off + int64(m.Length),
		size: int64(m.Length), keep: m.Value&protocol.KeepAlive != 0, since: now, moved: now, addr: m.Addr}, true
}
