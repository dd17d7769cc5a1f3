package protocol

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSendFD passes a pipe's write end over a real SOCK_SEQPACKET pair, as
// the os package's TestPassFD does, and writes through the received copy.
func TestSendFD(t *testing.T) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := Message{Type: Request, Listener: 2, Text: "passed"}
	if err := SendFD(pair[0], want, int(w.Fd())); err != nil {
		t.Fatal(err)
	}
	w.Close()
	buf := make([]byte, MaxPacket)
	n, fd, err := RecvFD(pair[1], buf)
	if err != nil || fd < 0 {
		t.Fatalf("RecvFD = %d, %d, %v; want a packet and an fd", n, fd, err)
	}
	got, err := Decode(buf[:n])
	if err != nil || got != want {
		t.Errorf("Decode = %+v, %v; want %+v", got, err, want)
	}
	if _, err := unix.Write(fd, []byte("x")); err != nil {
		t.Fatalf("write to the received fd: %v", err)
	}
	unix.Close(fd)
	var b [1]byte
	if n, err := r.Read(b[:]); n != 1 || b[0] != 'x' {
		t.Errorf("read the pipe: got %q, %v; want x", b[:n], err)
	}
}

func TestRecvFDWithoutFD(t *testing.T) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	var out [MessageSize]byte
	unix.Write(pair[0], Message{Type: Idle}.Encode(out[:]))
	buf := make([]byte, MaxPacket)
	n, fd, err := RecvFD(pair[1], buf)
	if n != MessageSize || fd != -1 || err != nil {
		t.Errorf("RecvFD = %d, %d, %v; want %d, -1, nil", n, fd, err, MessageSize)
	}
}
