package worker

import (
	"errors"
	"fmt"
	"io"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// channel is the child's end of the back-channel: a blocking SOCK_SEQPACKET fd.
type channel int

func (c channel) send(t protocol.Type, listener int, value uint32) error {
	return c.write(protocol.Message{Type: t, Listener: uint16(listener), Value: value})
}

// write sends m as one packet, again after an interrupted write.
func (c channel) write(m protocol.Message) error {
	var buf [protocol.MaxPacket]byte
	for {
		_, err := unix.Write(int(c), m.Encode(buf[:]))
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return fmt.Errorf("send %v: %w", m.Type, err)
			}
			return nil
		}
	}
}

// recv waits for the master's next message. It returns io.EOF when the
// master is gone, and an error wrapping ErrGarbage for a bad one.
func (c channel) recv() (protocol.Message, error) {
	var buf [2 * protocol.MessageSize]byte
	for {
		n, err := unix.Read(int(c), buf[:])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECONNRESET) || (err == nil && n == 0):
			return protocol.Message{}, io.EOF
		case err != nil:
			return protocol.Message{}, fmt.Errorf("read back-channel: %w", err)
		}
		m, err := protocol.Decode(buf[:n])
		if err == nil && !m.Type.FromMaster() {
			err = fmt.Errorf("%w: %v from the master", protocol.ErrGarbage, m.Type)
		}
		return m, err
	}
}

// recvFD is recv for a channel that may carry connections (Conn, its fd
// attached): it returns the fd too, or -1. A descriptor where the type has
// none, or none where it has one, is garbage (and closed).
func (c channel) recvFD() (protocol.Message, int, error) {
	m, fds, err := c.recvFDs()
	closeFD(fds[1])
	if err == nil && m.Type.HasTrailer() {
		closeFD(fds[0])
		return m, -1, fmt.Errorf("%w: %v, not negotiated", protocol.ErrGarbage, m.Type)
	}
	return m, fds[0], err
}

// recvFDs is recvFD for a child that announced offload, which may get two
// descriptors (Unsent: the connection, then the data): -1 for each one
// the message does not carry. Descriptors that do not fit the type are
// garbage (and closed).
func (c channel) recvFDs() (protocol.Message, [2]int, error) {
	var buf [protocol.MaxPacket]byte
	none := [2]int{-1, -1}
	for {
		n, fds, err := protocol.RecvFDs(int(c), buf[:])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECONNRESET) || (err == nil && n == 0):
			closeFDs(fds)
			return protocol.Message{}, none, io.EOF
		case err != nil:
			return protocol.Message{}, none, fmt.Errorf("read back-channel: %w", err)
		}
		m, err := protocol.Decode(buf[:n])
		want := 0
		if m.Type.HasFD() {
			want = 1
		}
		if m.Type.HasTrailer() {
			want = 2
		}
		switch {
		case err == nil && !m.Type.FromMaster():
			err = fmt.Errorf("%w: %v from the master", protocol.ErrGarbage, m.Type)
		case err == nil && countFDs(fds) != want:
			err = fmt.Errorf("%w: %v with a file descriptor missing or extra", protocol.ErrGarbage, m.Type)
		}
		if err != nil || want == 0 {
			closeFDs(fds)
			fds = none
		}
		return m, fds, err
	}
}

func closeFDs(fds [2]int) {
	closeFD(fds[0])
	closeFD(fds[1])
}

func countFDs(fds [2]int) int {
	n := 0
	for _, fd := range fds {
		if fd >= 0 {
			n++
		}
	}
	return n
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// order reads master message m as an order: it answers a Ping itself and
// returns 0, returns Accept or Drain for the caller to carry out, and an
// error wrapping protocol.ErrGarbage for any other type (the master sends a
// worker only what its Hello's capabilities name: this library names
// handoff, whose Conn serveDispatch takes before it asks order).
// Every wait for the master goes through it, so every mode treats a
// message alike.
func (c channel) order(m protocol.Message) (protocol.Type, error) {
	switch m.Type {
	case protocol.Ping:
		return 0, c.send(protocol.Pong, 0, m.Value)
	case protocol.Accept, protocol.Drain:
		return m.Type, nil
	}
	return 0, fmt.Errorf("%w: %v, not negotiated", protocol.ErrGarbage, m.Type)
}
