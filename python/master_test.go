package python_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
	"github.com/actd/actd/protocol"
)

// child is one `python3 -m actd.wsgi validated:app` started as actd would
// start a child, the test holding the master's end of its back-channel (a
// real SOCK_SEQPACKET pair, the codec of package protocol) and its one
// listener (a real one on loopback), so that the test alone decides when
// each order goes out.
type child struct {
	addr    string
	channel *os.File
	cmd     *exec.Cmd
}

// startChild starts the child with its listener on fd 3 and its channel
// on fd 4, with env added to (and overriding) a revision-6 master's
// dispatch-mode environment, and reads its first messages, hello (H and
// the capabilities it announces, as receive writes it) and I. Cleanup
// drains the child and waits for it; the test logs its stderr if it
// failed or the child did.
func startChild(t *testing.T, hello string, env ...string) *child {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python(t), "-m", "actd.wsgi", "validated:app")
	cmd.Dir = filepath.Join(here, "testdata")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+here, "PYTHONDONTWRITEBYTECODE=1",
		"ACTD_ACCEPT_MODE=dispatch", "ACTD_PROTOCOL=6")
	cmd.Env = append(cmd.Env, env...) // the last of a name wins
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	addr, master := pooltest.StartChild(t, cmd)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT) // should a test have stopped it
		d := protocol.Message{Type: protocol.Drain}
		master.Write(d.Encode(make([]byte, d.Size()))) // gone already after a test's drain
		master.Close()
		if err := cmd.Wait(); err != nil || t.Failed() {
			t.Logf("child: %v, its stderr:\n%s", err, stderr.Bytes())
		}
	})
	c := &child{addr: addr, channel: master, cmd: cmd}
	c.expect(t, hello+" I")
	return c
}

// send writes m on the master's end.
func (c *child) send(t *testing.T, m protocol.Message) {
	t.Helper()
	if _, err := c.channel.Write(m.Encode(make([]byte, m.Size()))); err != nil {
		t.Fatal(err)
	}
}

// signal sends the child sig (SIGSTOP, SIGCONT: to have several things
// arrive while it does not run); after SIGSTOP, it waits until the child
// has stopped (state T in /proc/PID/stat), so that what arrives next finds
// it stopped.
func (c *child) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig != syscall.SIGSTOP {
		return
	}
	stat := fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid)
	for deadline := time.Now().Add(ioTimeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		if _, state, _ := strings.Cut(string(b), ") "); strings.HasPrefix(state, "T") {
			return
		}
	}
	t.Fatalf("child %d not stopped %v after SIGSTOP", c.cmd.Process.Pid, ioTimeout)
}

// receive reads the child's next message, written as its type, then the
// listener (B, H) or value (S), or the text (R) in parentheses. It
// returns an error if none came within ioTimeout, at end of file, or for
// garbage.
func (c *child) receive() (string, error) {
	c.channel.SetReadDeadline(time.Now().Add(ioTimeout))
	b := make([]byte, protocol.MaxPacket)
	n, err := c.channel.Read(b)
	if err == nil && n == 0 {
		err = io.EOF
	}
	if err != nil {
		return "", fmt.Errorf("read the child's channel: %w", err)
	}
	m, err := protocol.Decode(b[:n])
	if err != nil {
		return "", err
	}
	switch m.Type {
	case protocol.Busy, protocol.Hello:
		return fmt.Sprintf("%c%d", m.Type, m.Listener), nil
	case protocol.Served:
		return fmt.Sprintf("S%d", m.Value), nil
	case protocol.Request:
		return "R(" + m.Text + ")", nil
	}
	return string(rune(m.Type)), nil
}

// expect reads the child's messages, leaving out request reports (R) and
// tallies (T), both best effort, until it has as many as want (space-separated, as
// receive writes them), and fails the test unless they are want.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	if got := c.next(t, len(strings.Fields(want))); got != want {
		t.Fatalf("messages: got %q, want %q", got, want)
	}
}

// next reads the child's next n messages, leaving out request reports
// and tallies, and returns them space-separated, as expect wants them.
func (c *child) next(t *testing.T, n int) string {
	t.Helper()
	var got []string
	for len(got) < n {
		m, err := c.receive()
		if err != nil {
			t.Fatalf("messages: got %q, then %v", strings.Join(got, " "), err)
		}
		if !strings.HasPrefix(m, "R(") && m != "T" {
			got = append(got, m)
		}
	}
	return strings.Join(got, " ")
}
