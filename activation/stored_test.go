package activation

import (
	"net"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestStoredNameRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name StoredName
		want string
	}{
		{StoredName{Listener: 0, N: 0}, "held-0-0"},
		{StoredName{Listener: 3, Parked: true, N: 17}, "parked-3-17"},
		{StoredName{Listener: 65535, N: 1<<64 - 1}, "held-65535-18446744073709551615"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			got := tc.name.String()
			if got != tc.want {
				t.Fatalf("String: got %q, want %q", got, tc.want)
			}
			if err := CheckName(got); err != nil {
				t.Errorf("CheckName(%q): %v, want nil", got, err)
			}
			back, ok := ParseStoredName(got)
			if !ok || back != tc.name {
				t.Errorf("ParseStoredName(%q): got %+v, %v; want %+v, true", got, back, ok, tc.name)
			}
		})
	}
}

func TestParseStoredNameRejects(t *testing.T) {
	for _, name := range []string{
		"", "web", "held", "held-", "held-0", "held-0-", "held--1", "held-0-1-2", "held-a-1",
		"held-01-1", "held-0-01", "held-+1-1", "held-65536-1", "held-0-18446744073709551616",
		"Held-0-1", "parked-0", "parked0-1", "heldx-0-1", "LISTEN_FD_3",
	} {
		if got, ok := ParseStoredName(name); ok {
			t.Errorf("ParseStoredName(%q): got %+v, true; want false", name, got)
		}
	}
}

// TestStoredConn: a passed fd is a stored connection only if it is a
// connected stream socket with a stored name; a listener is a listener
// whatever its name; anything else is an error.
func TestStoredConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn := rawFD(t, client.(syscall.Conn))
	listener := rawFD(t, ln.(syscall.Conn))
	udp, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(udp)
	for _, tc := range []struct {
		name   string
		fd     int
		isConn bool
		err    string
	}{
		{"parked-2-9", conn, true, ""},
		{"held-0-1", listener, false, ""},
		{"web", listener, false, ""},
		{"web", conn, false, "not a listening socket"},
		{"held-0-1", udp, false, "not a stream socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, isConn, err := storedConn(Socket{Name: tc.name, FD: tc.fd})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v, %v; want an error with %q", got, isConn, err, tc.err)
				}
				return
			}
			if err != nil || isConn != tc.isConn {
				t.Fatalf("got %v, %v; want %v, nil", isConn, err, tc.isConn)
			}
			if isConn && (got.FD != tc.fd || got.Name != tc.name || got.Listener != 2 || !got.Parked || got.N != 9) {
				t.Errorf("got %+v, want fd %d named %s: listener 2, parked, 9", got, tc.fd, tc.name)
			}
		})
	}
}

// rawFD returns the fd of c (still owned by c).
func rawFD(t *testing.T, c syscall.Conn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	rc.Control(func(raw uintptr) { fd = int(raw) })
	return fd
}
