package worker

import (
	"errors"
	"testing"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// TestRecvFD: a C comes with its descriptor; a C without one, or another
// message with one, is garbage, and the stray descriptor is closed.
func TestRecvFD(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       protocol.Message
		withFD  bool
		garbage bool
	}{
		{"C with fd", protocol.Message{Type: protocol.Conn, Listener: 1}, true, false},
		{"A without fd", protocol.Message{Type: protocol.Accept}, false, false},
		{"C without fd", protocol.Message{Type: protocol.Conn}, false, true},
		{"P with fd", protocol.Message{Type: protocol.Ping, Value: 3}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(pair[0])
			defer unix.Close(pair[1])
			if tc.withFD {
				err = protocol.SendFD(pair[0], tc.m, pair[0])
			} else {
				var buf [protocol.MessageSize]byte
				_, err = unix.Write(pair[0], tc.m.Encode(buf[:]))
			}
			if err != nil {
				t.Fatal(err)
			}
			m, fd, err := channel(pair[1]).recvFD()
			switch {
			case tc.garbage && (!errors.Is(err, protocol.ErrGarbage) || fd >= 0):
				t.Errorf("got %v, fd %d, %v; want garbage and no fd", m, fd, err)
			case !tc.garbage && (err != nil || m != tc.m || (fd >= 0) != tc.withFD):
				t.Errorf("got %+v, fd %d, %v; want %+v with fd %v", m, fd, err, tc.m, tc.withFD)
			}
			if fd >= 0 {
				unix.Close(fd)
			}
		})
	}
}
