package perl_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// TestKeepAcceptingReports: under a keep-accepting order (A with value 1)
// the handler serves the connections waiting behind the first and reports
// them as docs/protocol.md asks: the first with B, the short ones after it
// counted in one S before the I (not a B each: every message is a read for
// the master), and one that lasts (a keep-alive connection waiting for its
// next request) with a B of its own, after an S for the short ones before
// it. The test holds the master's end of the child's back-channel (a real
// SOCK_SEQPACKET pair and a real listener, the codec of package protocol)
// so that it alone decides when the order goes out: all the connections
// wait when it does.
func TestKeepAcceptingReports(t *testing.T) {
	needPlack(t)
	for _, tc := range []struct {
		name  string
		conns []string // the requests of each waiting connection, in accept order
		want  []string // the messages the order gets, up to its I: one of these
	}{
		{"short ones", []string{"close", "close", "close", "close"},
			[]string{"B0 R(GET /hello) S3 I"}},
		// An R is best effort: it is left out when the master has not read
		// three of the child's messages yet (Actd::Worker's report), as this
		// test's reader may not have on a loaded machine.
		{"one that lasts", []string{"close", "close", "keep-alive", "close"},
			[]string{"B0 R(GET /hello) S1 B0 R(GET /hello) S1 I", "B0 R(GET /hello) S1 B0 S1 I"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startWorker(t)
			var answers []chan error
			for _, kind := range tc.conns {
				conn, err := net.Dial("tcp", w.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(ioBound))
				if _, err := io.WriteString(conn, firstHello(kind == "keep-alive")); err != nil {
					t.Fatal(err)
				}
				pooltest.WaitArrived(t, conn) // in the accept queue, its request in
				done := make(chan error, 1)
				answers = append(answers, done)
				go func() { done <- converseHello(conn, kind == "keep-alive") }()
			}
			w.send(t, protocol.Message{Type: protocol.Accept, Value: protocol.KeepAccepting})
			var got []string
			for len(got) == 0 || got[len(got)-1] != "I" {
				m, err := w.receive()
				if err != nil {
					t.Fatalf("messages for the order: got %s, then %v, want one of %q", strings.Join(got, " "), err, tc.want)
				}
				got = append(got, m)
			}
			if s := strings.Join(got, " "); !slices.Contains(tc.want, s) {
				t.Errorf("messages for the order: got %s, want one of %q", s, tc.want)
			}
			for i, done := range answers {
				if err := <-done; err != nil {
					t.Errorf("connection %d: %v", i, err)
				}
			}
		})
	}
}

// worker is one `plackup -s Actd t/app.psgi` started as actd would start a
// dispatch-mode child, the test holding the master's end of its channel.
type worker struct {
	addr    string
	channel *os.File
}

// startWorker starts the child with a listener on fd 3 and its channel on
// fd 4, under a master of revision 3 without a filter, and reads its H
// (with the handoff capability) and I. Cleanup closes the channel (the
// child exits at end of file) and waits for it.
func startWorker(t *testing.T) *worker {
	t.Helper()
	return startWorkerWith(t, "H1", "ACTD_PROTOCOL=3")
}

// startWorkerWith is startWorker with env added to (and overriding) the
// dispatch-mode child's environment, wanting hello (H and the
// capabilities it announces, as receive writes it) before the I.
func startWorkerWith(t *testing.T, hello string, env ...string) *worker {
	t.Helper()
	lib, err := filepath.Abs("lib")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("perl", needPlack(t), "-s", "Actd", "-E", "deployment", filepath.Join("t", "app.psgi"))
	cmd.Env = append(os.Environ(), "PERL5LIB="+lib, "ACTD_ACCEPT_MODE=dispatch", "ACTD_PROTOCOL=3")
	cmd.Env = append(cmd.Env, env...) // the last of a name wins
	cmd.Stderr = os.Stderr
	addr, master := pooltest.StartChild(t, cmd)
	t.Cleanup(func() {
		master.Close()
		cmd.Wait()
	})
	w := &worker{addr: addr, channel: master}
	for _, want := range []string{hello, "I"} {
		if got, err := w.receive(); got != want {
			t.Fatalf("child's first messages: got %s, %v, want %s", got, err, want)
		}
	}
	return w
}

// send writes m on the master's end.
func (w *worker) send(t *testing.T, m protocol.Message) {
	t.Helper()
	if _, err := w.channel.Write(m.Encode(make([]byte, m.Size()))); err != nil {
		t.Fatal(err)
	}
}

// receive reads the child's next message, written as its type, then the
// listener (B, H, K) or value (S), or the text (R) in parentheses; a K
// with a value (not ready) gets it after a slash, "K0/1". It
// returns an error if none came within ioBound, or garbage. A file
// descriptor that came with it (K) is closed.
func (w *worker) receive() (string, error) {
	m, f, err := w.receiveFD()
	if f != nil {
		f.Close()
	}
	return m, err
}

// receiveFD is receive that also returns the file descriptor that came
// with the message (K), or nil if none did.
func (w *worker) receiveFD() (string, *os.File, error) {
	w.channel.SetReadDeadline(time.Now().Add(ioBound))
	raw, err := w.channel.SyscallConn()
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, protocol.MaxPacket)
	n, fd := 0, -1
	var recvErr error
	err = raw.Read(func(s uintptr) bool {
		n, fd, recvErr = protocol.RecvFD(int(s), b)
		return !errors.Is(recvErr, unix.EAGAIN)
	})
	var f *os.File
	if fd >= 0 {
		f = os.NewFile(uintptr(fd), "handed back")
	}
	if err = errors.Join(err, recvErr); err == nil && n == 0 {
		err = io.EOF
	}
	if err != nil {
		return "", f, fmt.Errorf("read the child's channel: %w", err)
	}
	m, err := protocol.Decode(b[:n])
	if err != nil {
		return "", f, err
	}
	s := format(m)
	if f != nil {
		s += "+fd"
	}
	return s, f, nil
}

// format writes m as receive does.
func format(m protocol.Message) string {
	switch m.Type {
	case protocol.Keep:
		if m.Value != 0 {
			return fmt.Sprintf("K%d/%d", m.Listener, m.Value)
		}
		return fmt.Sprintf("K%d", m.Listener)
	case protocol.Busy, protocol.Hello:
		return fmt.Sprintf("%c%d", m.Type, m.Listener)
	case protocol.Served:
		return fmt.Sprintf("S%d", m.Value)
	case protocol.Request:
		return "R(" + m.Text + ")"
	}
	return string(rune(m.Type))
}

// helloRequest is GET /hello with the Connection header value connection.
func helloRequest(connection string) string {
	return "GET /hello HTTP/1.1\r\nHost: t\r\nConnection: " + connection + "\r\n\r\n"
}

// firstHello is the first request converseHello expects sent on its
// connection: keep-alive with keepAlive, else close.
func firstHello(keepAlive bool) string {
	if keepAlive {
		return helloRequest("keep-alive")
	}
	return helloRequest("close")
}

// converseHello reads the answer to firstHello(keepAlive), which the
// caller sent on conn; with keepAlive, it then sends a second GET /hello,
// which closes, and reads its answer.
func converseHello(conn net.Conn, keepAlive bool) error {
	r := bufio.NewReader(conn)
	requests := []string{firstHello(keepAlive)} // sent by the caller
	if keepAlive {
		requests = append(requests, helloRequest("close"))
	}
	for i, request := range requests {
		if i > 0 {
			if _, err := io.WriteString(conn, request); err != nil {
				return err
			}
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !pidRE.Match(body) {
			return fmt.Errorf("GET /hello: got %d %q, %v, want 200 hello pid=N", resp.StatusCode, body, err)
		}
	}
	return nil
}
