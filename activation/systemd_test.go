package activation

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSystemdTwoNamedSockets(t *testing.T) {
	socks, err := Listen([]string{"127.0.0.1:0", "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer Close(socks)
	// web stays non-blocking; admin is made blocking, as systemd passes it
	// by default. Systemd() must leave both modes alone.
	if err := unix.SetNonblock(socks[1].FD, false); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(), "LISTEN_FDS=2", "LISTEN_FDNAMES=web:admin")
	c := startHelper(t, helperArgv(t, "/bin/sh", "-c", shLauncher), env, []int{socks[0].FD, socks[1].FD}, false)
	rep := c.report(t)
	if rep.Err != "" {
		t.Fatalf("child: Systemd failed: %s", rep.Err)
	}
	checkReport(t, rep, []fdState{
		{Listening: true, Nonblock: true, Cloexec: true},
		{Listening: true, Nonblock: false, Cloexec: true},
	})
	for i, name := range []string{"web", "admin"} {
		network, address := localAddr(t, socks[i].FD)
		if got := greeting(t, network, address); got != name {
			t.Fatalf("socket %d: got greeting %q, want %q", i, got, name)
		}
	}
}

// checkReport checks the names web and admin, the states, that only the two
// duplicates are sockets (fds 3 and 4 were closed; a duplicate may reuse
// fd 3) and that LISTEN_* was unset.
func checkReport(t *testing.T, rep helperReport, want []fdState) {
	t.Helper()
	if len(rep.Sockets) != 2 || rep.Sockets[0].Name != "web" || rep.Sockets[1].Name != "admin" {
		t.Fatalf("got sockets %+v, want web and admin", rep.Sockets)
	}
	for i, s := range rep.Sockets {
		if s.State != want[i] {
			t.Errorf("socket %s: got %+v, want %+v", s.Name, s.State, want[i])
		}
	}
	if rep.SocketFDs != 2 {
		t.Errorf("got %d socket fds in the child, want 2 (fds 3 and 4 closed, their duplicates open)", rep.SocketFDs)
	}
	if len(rep.ListenEnv) != 0 {
		t.Errorf("got %v still set, want LISTEN_* unset", rep.ListenEnv)
	}
}

func TestSystemdNotAListeningSocket(t *testing.T) {
	socks, err := Listen([]string{"127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer Close(socks)
	udp, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(udp)
	env := append(baseEnv(), "LISTEN_FDS=2", "LISTEN_FDNAMES=web:admin")
	argv := helperArgv(t, "/bin/sh", "-c", shLauncher)
	c := startHelper(t, argv, env, []int{socks[0].FD, udp}, false)
	c.wantExit = 3 // runHelper's exit status after a failed Systemd
	rep := c.report(t)
	const want = "systemd socket 1 (admin): not a listening socket"
	if !strings.Contains(rep.Err, want) {
		t.Fatalf("got error %q, want it to contain %q", rep.Err, want)
	}
	if len(rep.Sockets) != 0 || rep.SocketFDs != 0 {
		t.Fatalf("got %+v, want no sockets left open", rep)
	}
}

func TestSystemdSocketActivate(t *testing.T) {
	tool, err := exec.LookPath("systemd-socket-activate")
	if err != nil {
		t.Skip("systemd-socket-activate not installed (Debian package systemd)")
	}
	dir := t.TempDir()
	web, admin := filepath.Join(dir, "web.sock"), filepath.Join(dir, "admin.sock")
	argv := helperArgv(t, tool, "-l", web, "-l", admin, "--fdname=web:admin", "-E", helperEnv+"=1")
	c := startHelper(t, argv, baseEnv(), nil, true)
	waitListening(t, c.stderr, 2)
	// systemd-socket-activate execs the child on the first connection.
	first, err := net.DialTimeout("unix", web, ioTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	rep := c.report(t)
	if rep.Err != "" {
		t.Fatalf("child: Systemd failed: %s", rep.Err)
	}
	blocking := fdState{Listening: true, Cloexec: true}
	checkReport(t, rep, []fdState{blocking, blocking})
	if got := readGreeting(t, first); got != "web" {
		t.Fatalf("got greeting %q, want web", got)
	}
	if got := greeting(t, "unix", admin); got != "admin" {
		t.Fatalf("got greeting %q, want admin", got)
	}
}

// waitListening reads r until systemd-socket-activate said it listens on n
// sockets.
func waitListening(t *testing.T, r *os.File, n int) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for seen := 0; seen < n; {
		if !sc.Scan() {
			t.Fatalf("systemd-socket-activate: stderr ended before %d sockets listened: %v", n, sc.Err())
		}
		t.Log("systemd-socket-activate:", sc.Text())
		if strings.HasPrefix(sc.Text(), "Listening on ") {
			seen++
		}
	}
}

func TestSystemdNotForThisProcess(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
	}{
		{name: "LISTEN_FDS unset", env: map[string]string{}},
		{name: "LISTEN_PID of another process", env: map[string]string{
			"LISTEN_FDS": "2", "LISTEN_FDNAMES": "web:admin", "LISTEN_PID": strconv.Itoa(os.Getppid()),
		}},
		{name: "LISTEN_FDS zero", env: map[string]string{
			"LISTEN_FDS": "0", "LISTEN_PID": strconv.Itoa(os.Getpid()),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			socks, err := Systemd()
			if socks != nil || err != nil {
				t.Fatalf("got %v, %v; want nil, nil", socks, err)
			}
		})
	}
}

// TestSystemdInvalidName: a name libsystemd would reject in a child's
// LISTEN_FDNAMES (a control byte, non-ASCII) is refused at start, not handed on.
func TestSystemdInvalidName(t *testing.T) {
	socks, err := Listen([]string{"127.0.0.1:0", "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer Close(socks)
	env := append(baseEnv(), "LISTEN_FDS=2", "LISTEN_FDNAMES=web:caf\xc3\xa9")
	c := startHelper(t, helperArgv(t, "/bin/sh", "-c", shLauncher), env, []int{socks[0].FD, socks[1].FD}, false)
	c.wantExit = 3 // runHelper's exit status after a failed Systemd
	rep := c.report(t)
	const want = `systemd socket 1 (café): socket name "café" has byte "\xc3" at 3`
	if !strings.Contains(rep.Err, want) {
		t.Fatalf("got error %q, want it to contain %q", rep.Err, want)
	}
	if len(rep.Sockets) != 0 || rep.SocketFDs != 0 {
		t.Fatalf("got %+v, want no sockets left open", rep)
	}
}
