package activation

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// shLauncher execs the test binary from a shell that first sets LISTEN_PID
// to its own PID; exec keeps the PID, so LISTEN_PID names the test binary.
const shLauncher = `export LISTEN_PID=$$; exec "$0" "$@"`

// child is a helper process started by startHelper.
type child struct {
	pid      int
	wantExit int // the exit status wait expects
	stdout   *bufio.Reader
	stderr   *os.File
}

// startHelper starts argv with env and files as fds 0, 3, 4, ... (fd 1 is a
// pipe read by the test, fd 2 is stderr, or a pipe if stderrPipe). It waits
// for the child in a cleanup and fails the test unless it exited with
// c.wantExit.
func startHelper(t *testing.T, argv, env []string, extra []int, stderrPipe bool) *child {
	t.Helper()
	outR, outW := pipe(t)
	c := &child{stdout: bufio.NewReader(outR)}
	errFD := 2
	if stderrPipe {
		var errW *os.File
		c.stderr, errW = pipe(t)
		errFD = int(mustRawFD(t, errW))
		defer errW.Close()
	}
	devnull, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(devnull)
	files := []uintptr{uintptr(devnull), mustRawFD(t, outW), uintptr(errFD)}
	for _, fd := range extra {
		files = append(files, uintptr(fd))
	}
	c.pid, err = syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: env, Files: files})
	outW.Close()
	if err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	t.Cleanup(func() { c.wait(t) })
	return c
}

// wait reaps the child and fails the test unless it exited with wantExit.
func (c *child) wait(t *testing.T) {
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(c.pid, &ws, 0, nil); err != nil {
		t.Errorf("wait for child %d: %v", c.pid, err)
		return
	}
	if !ws.Exited() || ws.ExitStatus() != c.wantExit {
		t.Errorf("child %d: got wait status %v, want exit %d", c.pid, ws, c.wantExit)
	}
}

// report reads the child's JSON report.
func (c *child) report(t *testing.T) helperReport {
	t.Helper()
	line, err := c.stdout.ReadBytes('\n')
	if err != nil {
		t.Fatalf("read child report: %v (got %q)", err, line)
	}
	var rep helperReport
	if err := json.Unmarshal(line, &rep); err != nil {
		t.Fatalf("decode child report %q: %v", line, err)
	}
	return rep
}

// pipe returns a pipe whose write end is never touched through Fd.
func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "pipe-r"), os.NewFile(uintptr(p[1]), "pipe-w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// mustRawFD returns the fd of f without changing its blocking mode.
func mustRawFD(t *testing.T, f *os.File) uintptr {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd uintptr
	rc.Control(func(raw uintptr) { fd = raw })
	return fd
}

// helperArgv returns the argv that runs the test binary as the helper.
func helperArgv(t *testing.T, launcher ...string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append(launcher, exe, "-test.run=^$")
}

// baseEnv is this process's environment without LISTEN_* and with the
// helper switch on.
func baseEnv() []string {
	env := []string{helperEnv + "=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LISTEN_") {
			env = append(env, kv)
		}
	}
	return env
}

// greeting dials network/address and returns the line the child writes.
func greeting(t *testing.T, network, address string) string {
	t.Helper()
	conn, err := net.DialTimeout(network, address, ioTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", address, err)
	}
	defer conn.Close()
	return readGreeting(t, conn)
}

// readGreeting reads one line from conn.
func readGreeting(t *testing.T, conn net.Conn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(ioTimeout)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("read greeting: %v (got %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}
