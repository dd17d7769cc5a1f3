package perl_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds on waiting; none is a speed assertion, each only stops a broken
// run from hanging.
const (
	readyBound = 20 * time.Second // actd's start pool said hello
	stopBound  = 15 * time.Second // SIGTERM to exit
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
	addr    string // host:port it listens on
	control string // its control socket
	log     string // its stdout and stderr
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd.Wait has returned
	waitErr error
}

// startPool starts actd in mode running the handler with app (a file in
// t/), with PERL5LIB pointing at lib/, and waits until it is ready. flags
// are actd's; those after a "--" among them are the handler's.
// Cleanup stops it and prints its log if the test failed.
func startPool(t *testing.T, mode, app string, flags ...string) *pool {
	t.Helper()
	plackup := needPlack(t)
	lib, err := filepath.Abs("lib")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &pool{addr: freeAddr(t), control: filepath.Join(dir, "ctl.sock"), log: filepath.Join(dir, "actd.log"),
		exited: make(chan struct{})}
	var handler []string // flags after a "--" are the handler's, given to plackup
	if i := slices.Index(flags, "--"); i >= 0 {
		flags, handler = flags[:i], flags[i+1:]
	}
	args := append([]string{"--listen", p.addr, "--accept", mode, "--control-socket", p.control,
		"--log-format", "text"}, flags...)
	args = append(args, "--", "perl", plackup, "-s", "Actd", "-E", "deployment")
	args = append(append(args, handler...), filepath.Join("t", app))
	p.cmd = exec.Command(actd, args...)
	p.cmd.Env = append(os.Environ(), "PERL5LIB="+lib)
	log, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start actd: %v", err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("actd log:\n%s", b)
		}
	})
	t.Cleanup(p.kill)
	if _, err := p.waitStatus(func(d statusDoc) bool { return d.Pool.Ready && d.Pool.Idle > 0 }); err != nil {
		t.Fatalf("pool not ready: %v", err)
	}
	return p
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// kill stops actd if it still runs: SIGTERM, then SIGKILL.
func (p *pool) kill() {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-p.exited:
			return
		default:
		}
		p.cmd.Process.Signal(sig)
		select {
		case <-p.exited:
			return
		case <-time.After(stopBound):
		}
	}
	<-p.exited
}

// stop sends SIGTERM and returns actd's exit error, or an error if it
// still runs after stopBound.
func (p *pool) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM to actd: %w", err)
	}
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(stopBound):
		return fmt.Errorf("actd still runs %v after SIGTERM", stopBound)
	}
}

// statusDoc is the part of `actd status --json` the tests read.
type statusDoc struct {
	Pool struct {
		Ready bool `json:"ready"`
		Idle  int  `json:"idle"`
		Stats struct {
			Served     uint64 `json:"served"`
			KeepOrders uint64 `json:"keep_orders"`
			Respawned  uint64 `json:"respawned"`
			Garbage    uint64 `json:"garbage"`
			Hung       uint64 `json:"hung"`
		} `json:"stats"`
		Slots []struct {
			Slot    int    `json:"slot"`
			State   string `json:"state"`
			PID     int    `json:"pid"`
			Request string `json:"request"`
		} `json:"slots"`
	} `json:"pool"`
}

// status runs `actd status --json` against the pool's control socket.
func (p *pool) status() (statusDoc, error) {
	var doc statusDoc
	cmd := exec.Command(actd, "status", "--json", "--control-socket", p.control)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return doc, fmt.Errorf("actd status: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return doc, fmt.Errorf("actd status: %w in %q", err, out)
	}
	return doc, nil
}

// waitStatus polls `actd status` until cond holds, and returns that status;
// or the last one and an error after readyBound or when actd exited.
func (p *pool) waitStatus(cond func(statusDoc) bool) (statusDoc, error) {
	deadline := time.Now().Add(readyBound)
	for {
		doc, err := p.status()
		if err == nil && cond(doc) {
			return doc, nil
		}
		select {
		case <-p.exited:
			return doc, fmt.Errorf("actd exited: %v", p.waitErr)
		default:
		}
		if time.Now().After(deadline) {
			return doc, fmt.Errorf("condition not met within %v: last status %+v, %v", readyBound, doc.Pool, err)
		}
		time.Sleep(pollEvery)
	}
}

// complaints returns the warnings and errors in actd's log (a child that
// died, was killed or sent garbage), leaving out overloads.
func (p *pool) complaints() []string {
	b, _ := os.ReadFile(p.log)
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		bad := strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")
		if bad && !strings.Contains(line, "event=overload") {
			lines = append(lines, line)
		}
	}
	return lines
}
