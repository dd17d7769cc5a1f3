package prefork

import (
	"errors"
	"fmt"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// A child hangs up when it closes its end of the back-channel: it exits
// (after a drain, a crash, by itself) or is killed. What it sent before
// (its last Served count or Tally, a connection given back) waits on the
// master's end, and the master reads it all, up to the end of file, before
// it closes its end (readChannel at a harvest, readRest at the reap).
//
// Linux makes that harder where the master wrote to the channel since the
// child last read it: an accept order or a ping the child never read.
// When a SOCK_SEQPACKET socket closes with packets unread, the kernel
// (unix_release_sock) marks its peer with ECONNRESET, a pending error that
// the peer's next read or write returns once, and clears, before the
// packets queued for it; they come after it, then the end of file. So:
//   - a read that fails with ECONNRESET is read again (readPacket);
//   - a write to a child that hung up fails with ECONNRESET or EPIPE. That
//     child is not killed for it: kill closes the channel, and would drop
//     what the child sent last (a child that sends two Tallies and exits as
//     an accept order reaches it lost both). It only leaves the idle set,
//     and its end of file closes the channel at the next read (hungUp).

// hungUp reports whether err, from a write to a back-channel, says that the
// child closed its end: EPIPE, or the ECONNRESET of a child that closed it
// with the master's messages unread.
func hungUp(err error) bool {
	return errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET)
}

// sendFailed handles err, the error of a write of a message of type t to
// slot s's back-channel. A child that hung up (hungUp) leaves the idle set
// and keeps its channel, for the reads that follow to drain it (readChannel
// closes it at the end of file); any other child (EAGAIN: it lets its queue
// fill up, it does not read it) is killed.
func (p *Pool) sendFailed(s *slot, t protocol.Type, err error) {
	if hungUp(err) {
		p.idle.remove(s.num)
		p.log.Debug("child hung up: its last messages are read before its channel closes",
			"slot", s.num, "pid", s.pid, "message", t.String(), "err", err)
		return
	}
	p.kill(s, "killed", fmt.Sprintf("send %v: %v", t, err))
}
