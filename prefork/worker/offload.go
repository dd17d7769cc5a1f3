package worker

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// Write completion (docs/protocol.md, "Write completion"): a KeepFDHandler
// whose client reads its response slowly hands the master the connection
// with the rest of the response (protocol.Write) and goes back to work.
// The child announces protocol.CapOffload under an accept filter when the
// master (revision 5 or later) says how much it takes (EnvOffloadMax).

// offloadSince is the protocol revision that added protocol.CapOffload.
const offloadSince = 5

// patience is how long a write may wait for a slow client before the
// child hands the rest to the master: a client that reads at all keeps
// up with it, a slow one costs the child no more.
const patience = 10 * time.Millisecond

// ErrNoOffload is Finish's error when the connection cannot go to the
// master: not under an accept filter, an older master, no connection
// given to a KeepFDHandler with parkable set, or more than OffloadMax bytes.
var ErrNoOffload = errors.New("the master does not finish this response")

// offloads returns the most bytes of a response the master finishes for a
// child with env, 0 for none.
func (e Env) offloads() int64 {
	if e.Mode != protocol.Dispatch || e.Filter == acceptfilter.None || e.Revision < offloadSince {
		return 0
	}
	return e.Offload
}

// inHand is a connection a KeepFDHandler serves that may go to the master.
type inHand struct {
	ch       channel
	listener int
	fd       int
	max      int64
}

// finishable is the connection in hand, or nil: a child serves one at a
// time, so one inHand (hand) is reused: no allocation per connection.
var (
	finishable atomic.Pointer[inHand]
	hand       inHand
)

// keepWith serves fd, accepted on listener l, with keep, the connection
// finishable (Finish) meanwhile if the master takes responses (max > 0).
func keepWith(keep keepServer, ch channel, l, fd int, max int64) bool {
	if max <= 0 {
		return keep(fd)
	}
	hand = inHand{ch: ch, listener: l, fd: fd, max: max}
	finishable.Store(&hand)
	giveBack := keep(fd)
	finishable.Store(nil)
	return giveBack
}

// OffloadMax returns the most bytes the master would finish for connection
// fd, which a KeepFDHandler serves with parkable set: 0 if it would not
// (see ErrNoOffload).
func OffloadMax(fd int) int64 {
	h := finishable.Load()
	if h == nil || h.fd != fd {
		return 0
	}
	return h.max
}

// Finish hands connection fd to the master with the rest of its response:
// length bytes of data from offset (a memfd or a regular file; the
// caller keeps and closes data). keepAlive parks the connection for its
// next request once sent; else the master closes it. Nothing of the next
// request may have been read. On success the handler must return false
// and touch fd no more. It returns ErrNoOffload if the master does not
// take it (fd not in hand, or length beyond OffloadMax), or the error of
// the send to the master.
func Finish(fd, data int, offset, length int64, keepAlive bool) error {
	h := finishable.Load()
	if h == nil || h.fd != fd || length > h.max || offset < 0 || length < 0 || !takeOwed(fd) { // proxyread.go
		return ErrNoOffload
	}
	m := protocol.Message{Type: protocol.Write, Listener: uint16(h.listener),
		Offset: uint64(offset), Length: uint64(length), Addr: clientOf(fd)}
	if keepAlive {
		m.Value = protocol.KeepAlive
	}
	if err := protocol.SendFDs(int(h.ch), m, fd, data); err != nil {
		return err
	}
	finishable.Store(nil)
	return nil
}

// WriteOrFinish writes b to connection fd, a blocking socket. If the
// client stops taking bytes for a while (patience) and the rest fits
// OffloadMax, the rest goes to the master in a memfd (Finish) and it
// returns true: the handler must then return false. Else it writes all of
// b itself and returns false, or the write's error.
func WriteOrFinish(fd int, b []byte, keepAlive bool) (finished bool, err error) {
	for len(b) > 0 {
		n, err := unix.SendmsgN(fd, b, nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			if writable(fd, patience) {
				continue
			}
			if done, err := finishBytes(fd, b, keepAlive); done || err != nil {
				return done, err
			}
			writable(fd, -1)
			continue
		case err != nil:
			return false, err
		}
		b = b[n:]
	}
	return false, nil
}

// finishBytes hands rest to the master in a memfd, if it takes it.
func finishBytes(fd int, rest []byte, keepAlive bool) (bool, error) {
	if int64(len(rest)) > OffloadMax(fd) {
		return false, nil
	}
	mem, err := unix.MemfdCreate("actd-response", unix.MFD_CLOEXEC)
	if err != nil {
		return false, nil // the child writes it itself
	}
	defer unix.Close(mem)
	for b := rest; len(b) > 0; {
		n, err := unix.Write(mem, b)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return false, nil
		}
		b = b[max(n, 0):]
	}
	if err := Finish(fd, mem, 0, int64(len(rest)), keepAlive); err != nil {
		return false, fmt.Errorf("finish response: %w", err)
	}
	return true, nil
}

// SendFileOrFinish sends n bytes of f from off to connection fd with
// sendfile(2). If the client stops taking bytes for a while (patience) and
// the rest fits OffloadMax, the master gets the connection with f itself
// (Finish) and it returns true: the handler must then return false. Else
// it sends all of it and returns false, or the error of a send.
func SendFileOrFinish(fd int, f *os.File, off, n int64, keepAlive bool) (finished bool, err error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return false, err
	}
	finished, err = sendFile(fd, f, off, n, keepAlive)
	if !finished { // once the master has it, the flag is the master's (the file description is shared)
		unix.SetNonblock(fd, false)
	}
	return finished, err
}

// sendFile is SendFileOrFinish on fd made non-blocking.
func sendFile(fd int, f *os.File, off, n int64, keepAlive bool) (finished bool, err error) {
	end := off + n
	for off < end {
		k, err := unix.Sendfile(fd, int(f.Fd()), &off, int(min(end-off, 1<<20)))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			if writable(fd, patience) {
				continue
			}
			if end-off <= OffloadMax(fd) {
				if err := Finish(fd, int(f.Fd()), off, end-off, keepAlive); err != nil {
					return false, fmt.Errorf("finish response: %w", err)
				}
				return true, nil
			}
			writable(fd, -1)
			continue
		case err != nil:
			return false, err
		case k == 0:
			return false, fmt.Errorf("sendfile: %s is shorter than %d bytes", f.Name(), end)
		}
	}
	return false, nil
}

// writable waits up to d (-1: for ever) for fd to take bytes, and reports
// whether it does (or failed: the next write says how).
func writable(fd int, d time.Duration) bool {
	ms := -1
	if d >= 0 {
		ms = int(d / time.Millisecond)
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	for {
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err != nil || n > 0
	}
}

// writeUnsent carries out an Unsent: a response the master did not take
// (beyond its --offload-total), to write here, blocking, as a worker
// without offload would: Busy, the data to connection fd, then the
// connection back to the master (Keep) if it is kept alive, else closed,
// then Idle. It closes fd and data.
func writeUnsent(env Env, ch channel, m protocol.Message, fd, data int) error {
	defer unix.Close(data)
	l := int(m.Listener)
	if l >= len(env.Listeners) || m.Offset > 1<<62 || m.Length > 1<<62 {
		unix.Close(fd)
		return fmt.Errorf("%w: %v on listener %d of %d, %d bytes from %d", protocol.ErrGarbage, m.Type, l,
			len(env.Listeners), m.Length, m.Offset)
	}
	if err := ch.send(protocol.Busy, l, 0); err != nil {
		unix.Close(fd)
		return err
	}
	var err error
	if sendAll(fd, data, int64(m.Offset), int64(m.Length)) && m.Value&protocol.KeepAlive != 0 {
		err = protocol.SendFD(int(ch), protocol.Message{Type: protocol.Keep, Listener: m.Listener, Addr: m.Addr}, fd)
	}
	unix.Close(fd)
	if err != nil {
		return err
	}
	return ch.send(protocol.Idle, 0, 0)
}

// sendAll sends n bytes of data from off to the blocking socket fd, and
// reports whether all went out.
func sendAll(fd, data int, off, n int64) bool {
	end := off + n
	for off < end {
		k, err := unix.Sendfile(fd, data, &off, int(min(end-off, 1<<20)))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil || k == 0:
			return false
		}
	}
	return true
}
