package pooltest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// portSpan is how many ports below the kernel's ephemeral range FreePort
// picks from.
const portSpan = 10000

// FreeAddr returns 127.0.0.1:PORT for a port of FreePort.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}

// FreePort returns a TCP port that is free on 127.0.0.1 and stays free
// for t's run until t (or a process it starts, such as actd or a box's
// systemd) binds it:
//
//   - it lies in the portSpan ports below the kernel's ephemeral range
//     (net.ipv4.ip_local_port_range), where no bind to port 0 and no
//     connect on this host takes one: a port from bind to port 0, closed
//     and bound again a moment later, may meanwhile be another test
//     process's listener;
//   - it is reserved for t by an flock on a file named after it in
//     os.TempDir()/actd-test-ports, held until t ends, which every test
//     process using FreePort respects (this one too).
//
// Where the range leaves no room, or the lock files cannot be made, it
// falls back to a port from bind to port 0. A port that cannot be found
// fails t.
func FreePort(t testing.TB) int {
	t.Helper()
	low, err := ephemeralLow()
	if err != nil || low <= 1024+portSpan {
		return anyPort(t)
	}
	dir := filepath.Join(os.TempDir(), "actd-test-ports")
	if err := os.MkdirAll(dir, os.ModeSticky|0o777); err == nil {
		os.Chmod(dir, os.ModeSticky|0o777) // shared by every user's tests, whatever the umask
	}
	if unix.Access(dir, unix.W_OK) != nil {
		return anyPort(t)
	}
	first := rand.IntN(portSpan)
	for i := range portSpan {
		port := low - portSpan + (first+i)%portSpan
		lock, err := reserve(dir, port)
		if err != nil {
			continue
		}
		t.Cleanup(func() { lock.Close() })
		return port
	}
	t.Fatalf("no free port in %d-%d", low-portSpan, low-1)
	return 0
}

// reserve locks port's file in dir and checks that the port is free on
// 127.0.0.1. It returns the open lock file, which holds the reservation
// until it is closed, or an error if another process holds the lock or
// the port is in use.
func reserve(dir string, port int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_RDONLY|os.O_CREATE, 0o444)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("port %d: reserved: %w", port, err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		f.Close()
		return nil, err
	}
	ln.Close()
	return f, nil
}

// ephemeralLow returns the first port of the kernel's ephemeral range.
func ephemeralLow() (int, error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, err
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil {
		return 0, errors.New("ip_local_port_range: " + err.Error())
	}
	return low, nil
}

// anyPort returns a port of 127.0.0.1 that was free a moment ago (bind to
// port 0).
func anyPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
