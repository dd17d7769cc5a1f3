package main

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/actd/actd/activation"
	"golang.org/x/sys/unix"
)

// TestOpenFDStore: the store is on only when $FDSTORE is a positive number
// and NOTIFY_SOCKET is set.
func TestOpenFDStore(t *testing.T) {
	sock := fakeNotify(t)
	for _, tc := range []struct {
		fdstore, notify string
		on              bool
	}{
		{"4096", sock, true},
		{"", sock, false},
		{"0", sock, false},
		{"-1", sock, false},
		{"many", sock, false},
		{"4096", "", false},
	} {
		t.Run(tc.fdstore+"/"+tc.notify, func(t *testing.T) {
			t.Setenv(envFDStore, tc.fdstore)
			t.Setenv("NOTIFY_SOCKET", tc.notify)
			s, err := openFDStore()
			if err != nil || (s != nil) != tc.on {
				t.Fatalf("got %v, %v; want a store: %v, no error", s, err, tc.on)
			}
			if s != nil {
				s.sd.Close()
			}
		})
	}
}

// TestFDStoreNames: names are unique, numbered after the ones taken back,
// say the listener and parked; Keep refuses beyond $FDSTORE until a Remove.
func TestFDStoreNames(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", fakeNotify(t))
	t.Setenv(envFDStore, "3")
	s, err := openFDStore()
	if err != nil || s == nil {
		t.Fatalf("openFDStore: %v, %v", s, err)
	}
	defer s.sd.Close()
	back := s.takeBack([]activation.Conn{
		{StoredName: activation.StoredName{Listener: 1, Parked: true, N: 7}, Name: "parked-1-7", FD: 5},
	})
	if len(back) != 1 || back[0].FD != 5 || back[0].Listener != 1 || !back[0].Parked || back[0].Name != "parked-1-7" {
		t.Errorf("takeBack: got %+v", back)
	}
	for _, tc := range []struct {
		listener int
		parked   bool
		want     string
		err      error
	}{
		{0, false, "held-0-8", nil},
		{2, true, "parked-2-9", nil},
		{0, false, "", errStoreFull},
	} {
		name, err := s.Keep(1, tc.listener, tc.parked) // fd 1: any open fd will do
		if name != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Keep(listener %d, parked %v): got %q, %v; want %q, %v", tc.listener, tc.parked, name, err, tc.want, tc.err)
		}
	}
	if err := s.Remove("held-0-8"); err != nil {
		t.Fatal(err)
	}
	if name, err := s.Keep(1, 0, false); name != "held-0-10" || err != nil {
		t.Errorf("Keep after a Remove: got %q, %v; want held-0-10", name, err)
	}
}

// fakeNotify binds a unixgram socket standing in for NOTIFY_SOCKET, reads
// it (closing the fds that come) until the test ends, and returns its path.
func fakeNotify(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf, oob := make([]byte, 512), make([]byte, unix.CmsgSpace(4))
		for {
			_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
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
	return path
}

// TestFDStoreRate: beyond storeBurst connections at once Keep says busy,
// and a token comes back every 1/storeRate second.
func TestFDStoreRate(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", fakeNotify(t))
	t.Setenv(envFDStore, "4096")
	s, err := openFDStore()
	if err != nil || s == nil {
		t.Fatalf("openFDStore: %v, %v", s, err)
	}
	defer s.sd.Close()
	now := time.Unix(1000, 0)
	s.clock = func() time.Time { return now }
	for i := range storeBurst {
		if !s.take() {
			t.Fatalf("take %d of the burst: got false, want true", i)
		}
	}
	if _, err := s.Keep(1, 0, false); !errors.Is(err, errStoreBusy) {
		t.Fatalf("Keep beyond the burst: got %v, want errStoreBusy", err)
	}
	now = now.Add(time.Second / storeRate)
	if _, err := s.Keep(1, 0, false); err != nil {
		t.Errorf("Keep 1/storeRate later: got %v, want nil", err)
	}
	if _, err := s.Keep(1, 0, false); !errors.Is(err, errStoreBusy) {
		t.Errorf("Keep again at once: got %v, want errStoreBusy", err)
	}
}
