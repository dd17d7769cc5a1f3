//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runTimeout bounds every command run in a box.
const runTimeout = 2 * time.Minute

// exec runs argv in all of the box's namespaces (nsenter -t PID -a) with
// stdin, and returns its combined output. The error is non-nil when the
// command cannot start, exits non-zero (an *exec.ExitError) or outlives ctx.
func (b *Box) exec(ctx context.Context, stdin io.Reader, argv ...string) ([]byte, error) {
	args := append([]string{"-t", strconv.Itoa(b.PID), "-a", "--"}, argv...)
	cmd := exec.CommandContext(ctx, "nsenter", args...)
	cmd.Stdin = stdin
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8",
		"SYSTEMD_PAGER=",
		"SYSTEMD_COLORS=0",
		"DEBIAN_FRONTEND=noninteractive",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("box %s: %s: %w", b.Name, strings.Join(argv, " "), err)
	}
	return out, nil
}

// RunErr runs argv in the box and returns its combined output and the error
// of exec: nil on exit status 0.
func (b *Box) RunErr(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	out, err := b.exec(ctx, nil, argv...)
	return string(out), err
}

// Run runs argv in the box and returns its combined output; it fails the
// test when the command does not exit 0.
func (b *Box) Run(argv ...string) string {
	b.t.Helper()
	out, err := b.RunErr(argv...)
	if err != nil {
		b.t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// Sh runs a shell script in the box (sh -c) like Run.
func (b *Box) Sh(script string) string {
	b.t.Helper()
	return b.Run("sh", "-c", script)
}

// ExitCode runs argv in the box and returns its output and exit status;
// it fails the test only when the command cannot run at all.
func (b *Box) ExitCode(argv ...string) (string, int) {
	b.t.Helper()
	out, err := b.RunErr(argv...)
	if err == nil {
		return out, 0
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() >= 0 {
		return out, exit.ExitCode()
	}
	b.t.Fatalf("%v\n%s", err, out)
	return out, -1
}

// WriteFile writes data to path in the box with mode, creating parent
// directories. It goes through nsenter's stdin, so the path resolves in the
// box, never on the host.
func (b *Box) WriteFile(path string, data []byte, mode os.FileMode) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	script := `mkdir -p "$(dirname "$1")" && cat > "$1" && chmod "$2" "$1"`
	out, err := b.exec(ctx, bytes.NewReader(data), "sh", "-c", script, "sh", path, fmt.Sprintf("%o", mode.Perm()))
	if err != nil {
		b.t.Fatalf("write %s in box: %v\n%s", path, err, out)
	}
}

// CopyIn copies the host file hostPath to boxPath in the box, keeping its
// permission bits.
func (b *Box) CopyIn(hostPath, boxPath string) {
	b.t.Helper()
	data, err := os.ReadFile(hostPath)
	if err != nil {
		b.t.Fatalf("copy %s into box: %v", hostPath, err)
	}
	info, err := os.Stat(hostPath)
	if err != nil {
		b.t.Fatalf("copy %s into box: %v", hostPath, err)
	}
	b.WriteFile(boxPath, data, info.Mode())
}

// ReadFile returns the content of path in the box; it fails the test when
// the file cannot be read.
func (b *Box) ReadFile(path string) string {
	b.t.Helper()
	return b.Run("cat", "--", path)
}

// logBuffer is a bytes.Buffer that a process may write to while the test
// reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
