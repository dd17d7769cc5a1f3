package prefork_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork"
	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// envWorker switches the test binary into a child: TestMain runs the worker
// it names instead of the tests.
const envWorker = "ACTD_TEST_WORKER"

func TestMain(m *testing.M) {
	if name := os.Getenv(envWorker); name != "" {
		os.Exit(runTestWorker(name))
	}
	if os.Getenv(protocol.EnvSlot) != "" {
		// Started by a pool without a worker name: never run the tests
		// recursively.
		fmt.Fprintln(os.Stderr, "test binary started as a child without", envWorker)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// runTestWorker plays one of the test children:
//
//	echo     answers "slot=K pid=P line\n" for the line a client sends (and,
//	         with ACTD_TEST_ACCEPTLOG, appends the line to that file first)
//	slow     echo after ACTD_TEST_DELAY
//	crash    exits 3 at once, before hello
//	garbage  like echo, but the first child to claim ACTD_TEST_MARK sends garbage after hello
//	hang     like echo, but the first child to claim ACTD_TEST_MARK stops reading its back-channel
//	tallygarbage  like garbage, with a Tally one byte short (tally_test.go)
//	tallier  like echo, but the first child to claim ACTD_TEST_MARK sends two Tallies after hello and exits (tally_test.go)
//	hangup   like echo, but the first child to claim ACTD_TEST_MARK closes its back-channel after hello and lives on
//	fdhog    echo, but every accept fails with EMFILE
//	stubborn slow echo that ignores SIGQUIT
//	allgarbage  every child sends garbage after hello
//	nohello     every child stays silent
//	leak        echo that keeps ACTD_TEST_LEAK bytes (memory_test.go) per request, and says its RSS
//	keephttp    HTTP/1.x, keep-alive, gives idle connections back under a filter (handoff_test.go)
//	keephttp3   keephttp as a worker of protocol revision 3 does it: under a filter, the master accepts for it
//	proxyfirst  HTTP/1.1 with the client's address, handoff and proxy without screen: the master accepts for it (proxy_test.go)
//	nohandoff   says hello without the handoff capability, then waits
//	echo5       echo as a Go worker of protocol revision 5 serves it: no tls capability (tls_test.go)
//	flood       HTTP/1.0, one request per connection; /flood sends R reports nonstop first (reports_test.go)
//	spawner     echo that starts a grandchild for "spawn" and "spawn-listener" (leftovers_test.go)
//	blackhole   not a worker: a grandchild that accepts on fd 3 and answers nothing (leftovers_test.go)
func runTestWorker(name string) int {
	delay, _ := time.ParseDuration(os.Getenv("ACTD_TEST_DELAY"))
	var err error
	switch name {
	case "crash":
		return 3
	case "fdhog":
		env, envErr := worker.FromEnv()
		if envErr != nil {
			return 1
		}
		go func() { time.Sleep(300 * time.Millisecond); exhaustFDs() }() // after Serve's start
		err = worker.ServeEnv(context.Background(), env, echo(delay))
	case "stubborn":
		signal.Ignore(syscall.SIGQUIT)
		err = worker.Serve(context.Background(), echo(delay))
	case "allgarbage":
		return misbehave("garbage")
	case "nohello":
		time.Sleep(time.Hour)
		return 0
	case "leak":
		err = worker.Serve(context.Background(), leakEcho())
	case "flood":
		// master-first (revision 3): the child is busy from the master's C
		// on, so the raw R it floods with fit its state
		os.Setenv(protocol.EnvProtocol, "3")
		err = worker.ServeKeepFD(context.Background(), floodHTTP())
	case "keephttp":
		err = worker.ServeKeepFD(context.Background(), keepHTTP(delay))
	case "keephttp3":
		os.Setenv(protocol.EnvProtocol, "3") // the library then says hello without CapScreen, as it did at revision 3
		err = worker.ServeKeepFD(context.Background(), keepHTTP(delay))
	case "proxyfirst":
		err = serveProxyFirst() // proxy_test.go
	case "spawner":
		err = worker.Serve(context.Background(), spawner())
	case "blackhole":
		return blackhole()
	case "nohandoff":
		return misbehave(name)
	case "echo5":
		os.Setenv(protocol.EnvProtocol, "5") // the library then says hello without CapTLS, as it did at revision 5
		err = worker.Serve(context.Background(), echo(delay))
	case "garbage", "hang", "tallygarbage", "tallier", "hangup":
		if claimMark() {
			return misbehave(name)
		}
		err = worker.Serve(context.Background(), echo(delay))
	default:
		err = worker.Serve(context.Background(), echo(delay))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "test worker:", err)
		return 1
	}
	return 0
}

// exhaustFDs lowers RLIMIT_NOFILE to what is open now plus a few and fills
// the rest, so that every accept fails with EMFILE.
func exhaustFDs() error {
	lim := unix.Rlimit{Cur: 64, Max: 64}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	for {
		if _, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			if err == unix.EMFILE {
				return nil
			}
			return err
		}
	}
}

// claimMark reports whether this child is the first to create the mark file.
func claimMark() bool {
	f, err := os.OpenFile(os.Getenv("ACTD_TEST_MARK"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	fmt.Fprintln(f, os.Getpid())
	f.Close()
	return true
}

// startMisbehaving starts a pool of test worker name (garbage, hang,
// tallygarbage, tallier, hangup), whose first child goes wrong: it claims
// the mark file, whose path it returns, and writes its PID there.
func startMisbehaving(t *testing.T, cfg prefork.Config, name string) (*testPool, string) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "mark")
	return startPool(t, cfg, name, "ACTD_TEST_MARK="+mark), mark
}

// misbehave speaks the protocol's hello and idle, then goes wrong.
func misbehave(how string) int {
	env, err := worker.FromEnv()
	if err != nil {
		return 1
	}
	send := func(b []byte) { unix.Write(env.Channel, b) }
	var buf [protocol.MessageSize]byte
	send(protocol.Message{Type: protocol.Hello, Value: uint32(os.Getpid())}.Encode(buf[:]))
	send(protocol.Message{Type: protocol.Idle}.Encode(buf[:]))
	switch how {
	case "garbage":
		send([]byte("HELLO MASTER, I AM GARBAGE"))
	case "tallygarbage":
		var big [protocol.MaxPacket]byte
		send(protocol.Message{Type: protocol.Tally}.Encode(big[:])[:protocol.MessageSize+protocol.TallySize-1])
	case "tallier":
		sendTallies(send) // tally_test.go
		return 0
	case "hangup":
		unix.Close(env.Channel) // and live on, reading nothing
	}
	time.Sleep(time.Hour) // hang: never read orders or pings
	return 0
}

func echo(delay time.Duration) worker.Handler {
	id := "slot=" + os.Getenv(protocol.EnvSlot) + " pid=" + strconv.Itoa(os.Getpid())
	acceptLog := os.Getenv("ACTD_TEST_ACCEPTLOG")
	return func(c net.Conn) {
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		if acceptLog != "" {
			logAccepted(acceptLog, line)
		}
		time.Sleep(delay) // the worker's work (ACTD_TEST_DELAY): the thing tested
		fmt.Fprintf(c, "%s %s", id, line)
	}
}

// logAccepted appends line, a request read from an accepted connection, to
// the file at path (one write: appends from several children do not mix).
func logAccepted(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	f.WriteString(line)
	f.Close()
}

// testPool is a running pool of test children on 127.0.0.1:0.
type testPool struct {
	*prefork.Pool
	program prefork.Program
	addr    string
	fd      int // the listener, the pool's: open in this process while it runs
	cancel  context.CancelFunc
	runErr  chan error
}

// startPool starts a pool whose children run the test worker name.
func startPool(t *testing.T, cfg prefork.Config, name string, env ...string) *testPool {
	t.Helper()
	fd, addr := loopbackListener(t)
	return startPoolOn(t, cfg, name, fd, addr, env...)
}

// loopbackListener returns the fd of a new TCP listener on 127.0.0.1 (a
// duplicate, as activation hands out; the caller owns it) and its address.
// A failed listen fails t.
func loopbackListener(t *testing.T) (int, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return dupListener(t, ln), ln.Addr().String()
}

// testProgram runs this test binary as the test worker name, with env
// added to this process's environment.
func testProgram(name string, env ...string) prefork.Program {
	return prefork.Program{Path: "/proc/self/exe", Args: []string{"prefork.test"},
		Env: append(os.Environ(), append(env, envWorker+"="+name)...)}
}

// startPoolOn starts a pool on listener fd, which it owns from then on,
// whose address is addr.
func startPoolOn(t *testing.T, cfg prefork.Config, name string, fd int, addr string, env ...string) *testPool {
	t.Helper()
	cfg.Program = testProgram(name, env...)
	p, err := prefork.New(cfg, []prefork.Listener{{Name: "test", FD: fd}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tp := &testPool{Pool: p, program: cfg.Program, addr: addr, fd: fd, cancel: cancel, runErr: make(chan error, 1)}
	go func() { tp.runErr <- p.Run(ctx) }()
	t.Cleanup(func() { tp.stop(t) })
	select {
	case <-p.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("pool not ready after 10s")
	}
	return tp
}

// reload reloads with cfg and the pool's test worker.
func (tp *testPool) reload(cfg prefork.Config) (<-chan struct{}, error) {
	cfg.Program = tp.program
	_, ready, err := tp.Reload(cfg)
	return ready, err
}

// stop cancels the pool and waits for Run to return.
func (tp *testPool) stop(t *testing.T) {
	tp.cancel()
	select {
	case err := <-tp.runErr:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		tp.runErr <- err // for a second stop
	case <-time.After(15 * time.Second):
		t.Error("Run did not return 15s after stop")
	}
}

// dupListener takes ln's fd the way activation does: a duplicate, so ln can close.
func dupListener(t *testing.T, ln net.Listener) int {
	t.Helper()
	rc, err := ln.(interface {
		SyscallConn() (syscall.RawConn, error)
	}).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	rc.Control(func(raw uintptr) { fd, err = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// request sends line to the pool and returns the answer "slot=K pid=P line".
func request(addr, line string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return exchange(c, line)
}

// exchange sends line on c and returns the answer's line, trimmed, or the
// first write or read error; it gives c a deadline 20 s on.
func exchange(c net.Conn, line string) (string, error) {
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintln(c, line); err != nil {
		return "", err
	}
	ans, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(ans), err
}

// eventually polls cond until it holds or 15 seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 15s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func snapshot(t *testing.T, p *testPool) prefork.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := p.Snapshot(ctx)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return s
}

// fastConfig is a config with short periods for tests.
func fastConfig(mode protocol.Mode) prefork.Config {
	c := prefork.DefaultConfig()
	c.Mode = mode
	c.ScalePeriod = 50 * time.Millisecond
	c.PingInterval = 200 * time.Millisecond
	c.PingTimeout = 500 * time.Millisecond
	c.StartTimeout = 5 * time.Second
	c.GracefulTimeout = 10 * time.Second
	return c
}
