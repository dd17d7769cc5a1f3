package activation

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/internal/fdwait"
)

// helperEnv switches the test binary into the socket-activated child of
// systemd_test.go. The child is started through a launcher (sh or
// systemd-socket-activate) that sets LISTEN_PID to the child's own PID
// before it execs the test binary, exactly as systemd does.
const helperEnv = "ACTD_ACTIVATION_HELPER"

// helperReport is what the child prints, as one JSON line on stdout, after
// Systemd returned and before it accepts anything.
type helperReport struct {
	Err       string
	Sockets   []helperSocket
	OrigOpen  []bool   // whether fds 3 and 4 are still open
	SocketFDs int      // how many fds of the child are sockets
	ListenEnv []string // LISTEN_* variables still set
}

// helperSocket is one socket as the child saw it.
type helperSocket struct {
	Name  string
	FD    int
	State fdState
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	os.Exit(m.Run())
}

// runHelper is the child: it calls Systemd, reports, then accepts one
// connection per socket and writes the socket's name on it.
func runHelper() int {
	socks, err := Systemd()
	rep := helperReport{SocketFDs: countSocketFDs()}
	if err != nil {
		rep.Err = err.Error()
	}
	for _, s := range socks {
		st, err := inspectFD(s.FD)
		if err != nil {
			rep.Err = err.Error()
		}
		rep.Sockets = append(rep.Sockets, helperSocket{Name: s.Name, FD: s.FD, State: st})
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LISTEN_") {
			rep.ListenEnv = append(rep.ListenEnv, kv)
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil || rep.Err != "" {
		return 3
	}
	for _, s := range socks {
		if err := greetOne(s); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 4
		}
	}
	return 0
}

// greetOne accepts one connection on s (waiting with poll if s is
// non-blocking) and writes s.Name to it.
func greetOne(s Socket) error {
	if _, err := fdwait.Readable(s.FD, ioTimeout); err != nil {
		return fmt.Errorf("poll %s: %w", s.Name, err)
	}
	nfd, _, err := unix.Accept4(s.FD, unix.SOCK_CLOEXEC)
	if err != nil {
		return fmt.Errorf("accept %s: %w", s.Name, err)
	}
	defer unix.Close(nfd)
	_, err = unix.Write(nfd, []byte(s.Name+"\n"))
	return err
}

// countSocketFDs counts the fds of this process that are sockets.
func countSocketFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range entries {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}
