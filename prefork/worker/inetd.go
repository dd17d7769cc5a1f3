package worker

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Inetd returns a Handler that runs argv once per connection, inetd style:
// the connection is the program's stdin and stdout, stderr is the child's,
// and REMOTE_ADDR and REMOTE_PORT are set as systemd's Accept=yes sets them.
// The handler returns when the program exits; a program that cannot start
// is logged to stderr and the connection closed.
func Inetd(argv []string) Handler {
	return func(c net.Conn) {
		f, err := connFile(c)
		if err != nil {
			os.Stderr.WriteString("actd inetd: " + err.Error() + "\n")
			return
		}
		defer f.Close()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, os.Stderr
		cmd.Env = append(connEnv(), remoteEnv(c.RemoteAddr())...)
		if err := cmd.Run(); err != nil {
			if _, exited := err.(*exec.ExitError); !exited {
				os.Stderr.WriteString("actd inetd: " + err.Error() + "\n")
			}
		}
	}
}

// connFile returns a duplicate of c's fd as a file. exec puts it into
// blocking mode, as a program reading stdin expects.
func connFile(c net.Conn) (*os.File, error) {
	sc, ok := c.(interface{ File() (*os.File, error) })
	if !ok {
		return nil, syscall.ENOTSOCK
	}
	return sc.File()
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

func remoteEnv(a net.Addr) []string {
	switch a := a.(type) {
	case *net.TCPAddr:
		return []string{"REMOTE_ADDR=" + a.IP.String(), "REMOTE_PORT=" + itoa(a.Port)}
	case *net.UnixAddr:
		return nil
	}
	return nil
}
