package protocol

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// SendFD writes m to the back-channel conn with file descriptor fd attached
// (SCM_RIGHTS): the receiver gets its own copy, the sender still owns fd. It
// returns the write's error, wrapped, and retries on EINTR.
func SendFD(conn int, m Message, fd int) error { return SendFDs(conn, m, fd) }

// SendFDs is SendFD with several descriptors, in order (a Write: the
// connection, then the data).
func SendFDs(conn int, m Message, fds ...int) error {
	buf := make([]byte, m.Size())
	for {
		err := unix.Sendmsg(conn, m.Encode(buf), unix.UnixRights(fds...), nil, 0)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return fmt.Errorf("send %v with fd: %w", m.Type, err)
			}
			return nil
		}
	}
}

// RecvFD reads one packet from conn into buf (at least MaxPacket bytes) and
// returns it with the file descriptor it carried, or -1 if none. Extra
// descriptors, or one that came with a packet that is not a message, are
// closed. n is 0 at EOF. The packet is not decoded: see Decode.
func RecvFD(conn int, buf []byte) (n, fd int, err error) {
	var oob [64]byte // room for a few descriptors; no allocation per message
	n, oobn, _, _, err := unix.Recvmsg(conn, buf, oob[:], unix.MSG_CMSG_CLOEXEC)
	if err != nil || oobn == 0 {
		return n, -1, err
	}
	fd = -1
	for _, f := range receivedFDs(oob[:oobn]) {
		if fd < 0 {
			fd = f
			continue
		}
		unix.Close(f)
	}
	return n, fd, nil
}

// RecvFDs is RecvFD for a packet that may carry two descriptors (an
// Unsent: the connection, then the data): -1 for each one missing; any
// further ones are closed.
func RecvFDs(conn int, buf []byte) (n int, fds [2]int, err error) {
	var oob [64]byte
	fds = [2]int{-1, -1}
	n, oobn, _, _, err := unix.Recvmsg(conn, buf, oob[:], unix.MSG_CMSG_CLOEXEC)
	if err != nil || oobn == 0 {
		return n, fds, err
	}
	for i, f := range receivedFDs(oob[:oobn]) {
		if i < len(fds) {
			fds[i] = f
			continue
		}
		unix.Close(f)
	}
	return n, fds, nil
}

// receivedFDs returns the descriptors in a control message buffer.
func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, msg := range msgs {
		if got, err := unix.ParseUnixRights(&msg); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}
