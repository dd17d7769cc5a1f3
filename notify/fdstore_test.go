package notify

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFDStore: Store sends FDSTORE=1 and the name with a copy of the fd
// attached (the same socket: same inode), Remove sends FDSTOREREMOVE=1 and
// the name, both over the one socket OpenFDStore opened.
func TestFDStore(t *testing.T) {
	for _, addr := range []string{"path", "@abstract"} {
		t.Run(addr, func(t *testing.T) {
			if addr == "path" {
				addr = filepath.Join(t.TempDir(), "notify.sock")
			} else {
				addr = "@actd-test-fdstore" + t.TempDir() // the whole path: a name no other test run has
			}
			sd := listenNotify(t, addr)
			s, err := OpenFDStore()
			if err != nil || s == nil {
				t.Fatalf("OpenFDStore: got %v, %v; want a store", s, err)
			}
			defer s.Close()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			if err := s.Store(int(w.Fd()), "held-0-7"); err != nil {
				t.Fatalf("Store: %v", err)
			}
			state, fds := sd.nextWithFDs(t)
			if state != "FDSTORE=1\nFDNAME=held-0-7" || len(fds) != 1 {
				t.Fatalf("got %q with %d fds, want FDSTORE=1 FDNAME=held-0-7 with 1", state, len(fds))
			}
			defer unix.Close(fds[0])
			if !sameFile(t, fds[0], int(w.Fd())) {
				t.Errorf("the fd attached is not the one stored")
			}
			if err := s.Remove("held-0-7"); err != nil {
				t.Fatalf("Remove: %v", err)
			}
			if state, fds := sd.nextWithFDs(t); state != "FDSTOREREMOVE=1\nFDNAME=held-0-7" || len(fds) != 0 {
				t.Errorf("got %q with %d fds, want FDSTOREREMOVE=1 FDNAME=held-0-7 with none", state, len(fds))
			}
			s.Close()
			if err := s.Remove("x"); err == nil {
				t.Errorf("Remove after Close: got nil, want an error")
			}
		})
	}
}

func TestOpenFDStoreWithoutSocket(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if s, err := OpenFDStore(); s != nil || err != nil {
		t.Errorf("got %v, %v; want nil, nil", s, err)
	}
}

// nextWithFDs returns the next datagram and the fds attached to it.
func (f *fakeSystemd) nextWithFDs(t *testing.T) (string, []int) {
	t.Helper()
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(4*4))
	f.conn.SetReadDeadline(time.Now().Add(readTimeout))
	n, oobn, _, _, err := f.conn.ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatalf("read fake NOTIFY_SOCKET: %v", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, got...)
	}
	return string(buf[:n]), fds
}

// sameFile reports whether fds a and b are the same file.
func sameFile(t *testing.T, a, b int) bool {
	t.Helper()
	var sa, sb unix.Stat_t
	if err := unix.Fstat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// BenchmarkFDStoreKeepRemove is the master's cost of the fd store per held
// connection: one Store (an fd attached) and one Remove, to a fake
// NOTIFY_SOCKET that a goroutine drains (closing the fds), as systemd would.
func BenchmarkFDStoreKeepRemove(b *testing.B) {
	addr := filepath.Join(b.TempDir(), "notify.sock")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	b.Setenv("NOTIFY_SOCKET", addr)
	go func() {
		buf, oob := make([]byte, 512), make([]byte, unix.CmsgSpace(4))
		for {
			_, oobn, _, _, err := ln.ReadMsgUnix(buf, oob)
			if err != nil {
				return
			}
			msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
			for _, m := range msgs {
				fds, _ := unix.ParseUnixRights(&m)
				for _, fd := range fds {
					unix.Close(fd)
				}
			}
		}
	}()
	s, err := OpenFDStore()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		name := "held-0-" + strconv.Itoa(i)
		if err := s.Store(pair[0], name); err != nil {
			b.Fatal(err)
		}
		if err := s.Remove(name); err != nil {
			b.Fatal(err)
		}
	}
}
