package worker

import (
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Inetd returns an FDHandler that runs argv once per connection, inetd
// style: the connection is the program's stdin and stdout, stderr is the
// child's, and REMOTE_ADDR and REMOTE_PORT are set as systemd's Accept=yes
// sets them. The handler returns when the program exits; a program that
// cannot start is logged to stderr and the connection closed.
func Inetd(argv []string) FDHandler {
	return func(fd int) {
		// A duplicate the *os.File owns (the caller closes fd); blocking,
		// as a program reading stdin expects.
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			os.Stderr.WriteString("actd inetd: " + err.Error() + "\n")
			return
		}
		f := os.NewFile(uintptr(dup), "conn")
		defer f.Close()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, os.Stderr
		cmd.Env = append(connEnv(), remoteEnv(fd)...)
		if err := cmd.Run(); err != nil {
			if _, exited := err.(*exec.ExitError); !exited {
				os.Stderr.WriteString("actd inetd: " + err.Error() + "\n")
			}
		}
	}
}

// connEnv is the child's environment less the actd and activation variables:
// the per-connection program gets a connection, not the listeners.
func connEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LISTEN_") && !strings.HasPrefix(kv, "ACTD_") {
			env = append(env, kv)
		}
	}
	return env
}

// remoteEnv returns REMOTE_ADDR and REMOTE_PORT for a TCP peer (the
// client its PROXY header gave, proxy.go, else the peer accept4 gave,
// peer.go), nothing for a unix one.
func remoteEnv(fd int) []string {
	if ap, err := netip.ParseAddrPort(clientOf(fd)); err == nil {
		return []string{"REMOTE_ADDR=" + ap.Addr().String(), "REMOTE_PORT=" + strconv.Itoa(int(ap.Port()))}
	}
	ap, ok := peerAddrPort(fd)
	if !ok {
		return nil
	}
	return []string{"REMOTE_ADDR=" + ap.Addr().String(), "REMOTE_PORT=" + strconv.Itoa(int(ap.Port()))}
}
