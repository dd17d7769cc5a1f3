package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asMainEnv makes the test binary run main() instead of the tests, so it
// can play the baseline (and re-execute itself as the baseline's children).
const asMainEnv = "BASELINE_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var bodyPattern = regexp.MustCompile(`^slot=[01] pid=[0-9]+\n$`)

// TestBaseline runs the real program with two children, serving with plain
// system calls and through net.Conn, and checks that every request is
// answered, keep-alive is honoured, Connection: close closes, and SIGTERM
// stops the whole tree.
func TestBaseline(t *testing.T) {
	for _, mode := range []string{"-netconn=false", "-netconn=true"} {
		t.Run(mode, func(t *testing.T) { testBaseline(t, mode) })
	}
}

func testBaseline(t *testing.T, mode string) {
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "-listen", addr, "-children", "2", mode)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	conn := dialWhenUp(t, addr)

	t.Run("keep-alive", func(t *testing.T) {
		defer conn.Close()
		r := bufio.NewReader(conn)
		first := exchange(t, conn, r, "")
		second := exchange(t, conn, r, "")
		if first != second {
			t.Errorf("got %q then %q on one connection, want the same child twice", first, second)
		}
	})
	t.Run("close", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r := bufio.NewReader(c)
		exchange(t, c, r, "Connection: close\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := r.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("after Connection: close got %d bytes, %v, want EOF", n, err)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("exit after SIGTERM: got %v, want status 0", err)
		}
		if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			t.Error("a child still accepts after the parent stopped")
		}
	})
}

// exchange sends one GET with extra headers and returns the body. It fails
// the test unless the answer is a 200 with the expected body.
func exchange(t *testing.T, c net.Conn, r *bufio.Reader, headers string) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n%s\r\n", headers)
	status, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200 ") {
		t.Fatalf("status line: got %q, %v, want HTTP/1.1 200", status, err)
	}
	length := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("headers: %v", err)
		}
		if line == "\r\n" {
			break
		}
		fmt.Sscanf(line, "Content-Length: %d", &length)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatalf("body: %v", err)
	}
	if !bodyPattern.Match(body) {
		t.Errorf("body: got %q, want slot=K pid=P", body)
	}
	return string(body)
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// dialWhenUp connects to addr, retrying for up to 10 s while the server starts.
func dialWhenUp(t *testing.T, addr string) net.Conn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("server at %s never came up: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
