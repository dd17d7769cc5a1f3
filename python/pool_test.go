package python_test

import (
	"bufio"
	"bytes"
	"fmt"
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
)

// Bounds on waiting; none is a speed assertion, each only stops a broken
// run from hanging.
const (
	readyBound = 60 * time.Second // the start pool said hello (Django imports slowly)
	pollEvery  = 50 * time.Millisecond
	ioTimeout  = 20 * time.Second
)

// debianPython is the interpreter Debian's python3-flask and python3-django
// install for; another python3 on PATH (pyenv) would not find them.
const debianPython = "/usr/bin/python3"

// python returns the python3 to run, or skips the test.
func python(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(debianPython); err == nil {
		return debianPython
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found (Debian package python3): the adapter needs it")
	}
	return p
}

// needModule skips the test if python cannot import module.
func needModule(t *testing.T, python, module, pkg string) {
	t.Helper()
	if err := exec.Command(python, "-c", "import "+module).Run(); err != nil {
		t.Skipf("%s cannot import %s (Debian package %s): %v", python, module, pkg, err)
	}
}

// pool is one running `actd --listen ADDR -- python3 -m actd.wsgi ...`.
type pool struct {
	*pooltest.Proc
	addr string
}

// statusDoc is what `actd status --json` prints.
type statusDoc = pooltest.Status

// startPool starts actd in mode with the worker argv and further flags,
// the adapter importable (PYTHONPATH), and waits until it is ready.
func startPool(t *testing.T, mode string, worker []string, flags ...string) *pool {
	t.Helper()
	addr := pooltest.FreeAddr(t)
	args := append([]string{"--listen", addr, "--accept", mode}, flags...)
	return startActd(t, addr, append(append(args, "--"), worker...)...)
}

// startActd starts actd with args (plus its control socket and text logs),
// the adapter importable (PYTHONPATH) and testdata the working directory,
// and waits until it is ready to serve on addr.
func startActd(t *testing.T, addr string, args ...string) *pool {
	t.Helper()
	control := filepath.Join(t.TempDir(), "ctl.sock")
	base := []string{"--control-socket", control, "--log-format", "text"}
	if !slices.Contains(args, "--start-timeout") {
		// Flask and Django import for seconds, more on a loaded machine:
		// the default 10 s would kill children that are only slow to start.
		base = append(base, "--start-timeout", "60s")
	}
	cmd := exec.Command(pooltest.Actd(t), append(base, args...)...)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "PYTHONPATH="+here, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Dir = filepath.Join(here, "testdata")
	p := &pool{Proc: pooltest.Start(t, cmd, control, readyBound), addr: addr}
	if _, err := p.WaitStatus(pooltest.Ready); err != nil {
		t.Fatalf("pool not ready: %v", err)
	}
	return p
}

// waitLog polls the log until it contains every one of want.
func (p *pool) waitLog(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(readyBound)
	for {
		text := p.LogText(t)
		missing := ""
		for _, w := range want {
			if !strings.Contains(text, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("log has no %q after %v", missing, readyBound)
		}
		time.Sleep(pollEvery)
	}
}

// reply is one response read off a raw connection.
type reply struct {
	status int
	header http.Header
	body   string
	close  bool // Connection: close (net/http takes it out of header)
}

// exchange writes raw to a new connection to addr and reads responses
// until the server closes it; methods lists each expected response's
// request method (HEAD responses have no body), "GET" if left short.
func exchange(addr, raw string, methods ...string) ([]reply, error) {
	conn, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := conn.Write([]byte(raw)); err != nil {
		return nil, err
	}
	return readReplies(bufio.NewReader(conn), methods)
}

func readReplies(r *bufio.Reader, methods []string) ([]reply, error) {
	var out []reply
	for i := 0; ; i++ {
		if _, err := r.Peek(1); err != nil {
			return out, nil // closed by the server
		}
		method := "GET"
		if i < len(methods) {
			method = methods[i]
		}
		resp, err := http.ReadResponse(r, &http.Request{Method: method})
		if err != nil {
			return out, fmt.Errorf("response %d: %w", i, err)
		}
		var body bytes.Buffer
		_, err = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			return out, fmt.Errorf("response %d body: %w", i, err)
		}
		out = append(out, reply{resp.StatusCode, resp.Header, body.String(), resp.Close})
	}
}

func dial(addr string) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err == nil {
		conn.SetDeadline(time.Now().Add(ioTimeout))
	}
	return conn, err
}

func readAll(conn net.Conn) ([]reply, error) {
	return readReplies(bufio.NewReader(conn), nil)
}
