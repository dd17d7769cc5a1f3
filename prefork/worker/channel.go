package worker

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork"
)

// channel is the child's end of the back-channel: a blocking SOCK_SEQPACKET fd.
type channel int

func (c channel) send(t prefork.Type, listener int, value uint32) error {
	var buf [prefork.MessageSize]byte
	m := prefork.Message{Type: t, Listener: uint16(listener), Value: value}
	for {
		_, err := unix.Write(int(c), m.Encode(buf[:]))
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return fmt.Errorf("send %v: %w", t, err)
			}
			return nil
		}
	}
}

// recv waits for the master's next message. It returns io.EOF when the
// master is gone, and an error wrapping prefork.ErrGarbage for a bad one.
func (c channel) recv() (prefork.Message, error) {
	var buf [2 * prefork.MessageSize]byte
	for {
		n, err := unix.Read(int(c), buf[:])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECONNRESET) || (err == nil && n == 0):
			return prefork.Message{}, io.EOF
		case err != nil:
			return prefork.Message{}, fmt.Errorf("read back-channel: %w", err)
		}
		m, err := prefork.Decode(buf[:n])
		if err == nil && !m.Type.FromMaster() {
			err = fmt.Errorf("%w: %v from the master", prefork.ErrGarbage, m.Type)
		}
		return m, err
	}
}
