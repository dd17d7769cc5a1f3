package worker

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/actd/actd/protocol"
)

// ExecProgram replaces the current process with argv, the way systemd
// starts a socket-activated service: it sets LISTEN_PID to this process's
// PID (LISTEN_FDS and LISTEN_FDNAMES are already set by the master) and
// execs, keeping every fd — listeners at 3.., the back-channel after them.
// It returns only on failure.
func ExecProgram(argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("exec worker: no program")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("exec worker: %w", err)
	}
	os.Setenv(protocol.EnvListenPID, strconv.Itoa(os.Getpid()))
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec worker %s: %w", path, err)
	}
	return nil
}
