package perl_test

import (
	"fmt"
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
	readyBound = 20 * time.Second // actd's start pool said hello
	ioBound    = 10 * time.Second // one HTTP exchange
	pollEvery  = 50 * time.Millisecond
)

// actd is the actd binary TestMain builds for every test.
var actd string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "actd-perl-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	actd = filepath.Join(dir, "actd")
	if out, err := exec.Command("go", "build", "-o", actd, "github.com/actd/actd/cmd/actd").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build actd: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needPlack skips the test without perl, plackup or Plack's server test
// suite, and returns plackup's path.
func needPlack(t *testing.T) string {
	t.Helper()
	plackup, err := exec.LookPath("plackup")
	if err == nil {
		err = exec.Command("perl", "-MPlack::Test::Suite", "-e1").Run()
	}
	if err != nil {
		t.Skipf("perl with Plack needed (Debian package libplack-perl): %v", err)
	}
	return plackup
}

// pool is one running `actd --listen ADDR ... -- plackup -s Actd APP`.
type pool struct {
	*pooltest.Proc
	addr string // host:port it listens on
}

// statusDoc is what `actd status --json` prints.
type statusDoc = pooltest.Status

// startPool starts actd in mode running the handler with app (a file in
// t/), with PERL5LIB pointing at lib/, and waits until it is ready. flags
// are actd's; those after a "--" among them are the handler's.
// Cleanup stops it and prints its log if the test failed.
func startPool(t *testing.T, mode, app string, flags ...string) *pool {
	t.Helper()
	return startPoolWith(t, nil, mode, app, flags...)
}

// startPoolWith is startPool with the worker command led by prefix (for
// example env ACTD_PROTOCOL=3: a worker that reads an older revision).
func startPoolWith(t *testing.T, prefix []string, mode, app string, flags ...string) *pool {
	t.Helper()
	addr := pooltest.FreeAddr(t)
	return startPoolAt(t, addr, addr, prefix, mode, app, flags...)
}

// startPoolAt is startPoolWith listening on listen (a --listen value, such
// as unix:PATH), which clients reach at addr.
func startPoolAt(t *testing.T, listen, addr string, prefix []string, mode, app string, flags ...string) *pool {
	t.Helper()
	plackup := needPlack(t)
	lib, err := filepath.Abs("lib")
	if err != nil {
		t.Fatal(err)
	}
	control := filepath.Join(t.TempDir(), "ctl.sock")
	var handler []string // flags after a "--" are the handler's, given to plackup
	if i := slices.Index(flags, "--"); i >= 0 {
		flags, handler = flags[:i], flags[i+1:]
	}
	args := append([]string{"--listen", listen, "--accept", mode, "--control-socket", control,
		"--log-format", "text"}, flags...)
	args = append(append(args, "--"), prefix...)
	args = append(args, "perl", plackup, "-s", "Actd", "-E", "deployment")
	args = append(append(args, handler...), filepath.Join("t", app))
	cmd := exec.Command(actd, args...)
	cmd.Env = append(os.Environ(), "PERL5LIB="+lib)
	p := &pool{Proc: pooltest.Start(t, cmd, control, readyBound), addr: addr}
	if _, err := p.WaitStatus(pooltest.Ready); err != nil {
		t.Fatalf("pool not ready: %v", err)
	}
	return p
}

// complaints returns the warnings and errors in actd's log (a child that
// died, was killed or sent garbage), leaving out overloads.
func (p *pool) complaints() []string {
	b, _ := os.ReadFile(p.Log)
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		bad := strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")
		if bad && !strings.Contains(line, "event=overload") {
			lines = append(lines, line)
		}
	}
	return lines
}
