package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// notifySocket is a fake NOTIFY_SOCKET: it records every datagram.
type notifySocket struct {
	path string
	mu   sync.Mutex
	msgs []string
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	ns := &notifySocket{path: filepath.Join(t.TempDir(), "notify.sock")}
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: ns.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			ns.mu.Lock()
			ns.msgs = append(ns.msgs, string(buf[:n]))
			ns.mu.Unlock()
		}
	}()
	return ns
}

func (ns *notifySocket) env() string { return "NOTIFY_SOCKET=" + ns.path }

// all returns every assignment received, in order, one per line of each datagram.
func (ns *notifySocket) all() []string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var out []string
	for _, m := range ns.msgs {
		out = append(out, strings.Split(strings.TrimSpace(m), "\n")...)
	}
	return out
}

// count returns how many assignments start with prefix.
func (ns *notifySocket) count(prefix string) int {
	n := 0
	for _, a := range ns.all() {
		if strings.HasPrefix(a, prefix) {
			n++
		}
	}
	return n
}

// index returns the position of the first assignment with prefix after
// position from, or -1.
func (ns *notifySocket) index(prefix string, from int) int {
	for i, a := range ns.all() {
		if i > from && strings.HasPrefix(a, prefix) {
			return i
		}
	}
	return -1
}

func (ns *notifySocket) waitFor(t *testing.T, prefix string, from int) int {
	t.Helper()
	i := -1
	waitFor(t, "notify "+prefix, 15*time.Second, func() bool { i = ns.index(prefix, from); return i >= 0 })
	return i
}

// TestNotifyLifecycle: READY after start, STATUS with the pool line,
// RELOADING then READY around SIGHUP, STOPPING on SIGTERM, exit 0.
func TestNotifyLifecycle(t *testing.T) {
	ns := newNotifySocket(t)
	a := startActd(t, []string{ns.env()}, "--start-children", "2")
	ready := ns.waitFor(t, "READY=1", -1)
	ns.waitFor(t, "STATUS=", -1)
	if _, err := a.get(); err != nil {
		t.Fatal(err)
	}
	a.signal(t, syscall.SIGHUP)
	reloading := ns.waitFor(t, "RELOADING=1", ready)
	ns.waitFor(t, "READY=1", reloading)
	a.signal(t, syscall.SIGTERM)
	stopping := ns.waitFor(t, "STOPPING=1", reloading)
	ns.waitFor(t, "EXTEND_TIMEOUT_USEC=", stopping)
	if code := a.wait(t, 15*time.Second); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	var last string
	for _, s := range ns.all() {
		if strings.HasPrefix(s, "STATUS=") {
			last = s
		}
	}
	for _, want := range []string{"busy", "idle", "served", "respawned"} {
		if !strings.Contains(last, want) {
			t.Errorf("last status %q lacks %q", last, want)
		}
	}
}

// TestStatusCoalesced: a busy pool changes state on every connection, but
// STATUS= goes out at most about once per second.
func TestStatusCoalesced(t *testing.T) {
	ns := newNotifySocket(t)
	a := startActd(t, []string{ns.env()})
	ns.waitFor(t, "READY=1", -1)
	start, before := time.Now(), ns.count("STATUS=")
	for time.Since(start) < 3*time.Second {
		if _, err := a.get(); err != nil {
			t.Fatal(err)
		}
	}
	sent := ns.count("STATUS=") - before
	if sent < 1 || sent > 5 {
		t.Errorf("%d STATUS= in 3s of load, want 1 to 5", sent)
	}
}

// TestWatchdog: WATCHDOG=1 at half the interval while the pool works, none
// once connections queue while idle children never take them.
func TestWatchdog(t *testing.T) {
	ns := newNotifySocket(t)
	start := time.Now()
	a := startActd(t, []string{ns.env(), "WATCHDOG_USEC=1000000"},
		"--accept", "exclusive", "--scale-period", "100ms", "--", os.Args[0], lazyArg)
	ns.waitFor(t, "READY=1", -1)
	waitFor(t, "4 WATCHDOG=1", 10*time.Second, func() bool { return ns.count("WATCHDOG=1") >= 4 })
	// One at the start, then one per half interval: a slow machine only
	// widens the bound.
	if n, most := ns.count("WATCHDOG=1"), 2+int(time.Since(start)/(500*time.Millisecond)); n > most {
		t.Errorf("%d WATCHDOG=1 in %v at a 1s interval, want at most %d", n, time.Since(start), most)
	}
	// A connection the lazy children never accept: the pool is wedged.
	c, err := net.Dial("unix", a.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor(t, "the watchdog stops pinging", 10*time.Second, func() bool {
		return strings.Contains(a.stderr.String(), "no longer pinging systemd")
	})
	wedged := ns.count("WATCHDOG=1")
	// A window in which nothing may come (the thing tested): a watchdog
	// that went on pinging would send 4 in it.
	time.Sleep(2 * time.Second)
	if n := ns.count("WATCHDOG=1") - wedged; n != 0 {
		t.Errorf("%d WATCHDOG=1 while wedged, want 0", n)
	}
	if !a.status(t).Snapshot.Stats.Stuck {
		t.Errorf("status does not say stuck")
	}
}

// TestDrainOnSIGTERM: SIGTERM with 20 slow connections in flight; all 20
// get their full answer and actd exits 0.
func TestDrainOnSIGTERM(t *testing.T) {
	a := startActd(t, nil, "--start-children", "20", "--min-spare", "0", "--max-spare", "20",
		"--max-children", "20", "--handler-delay", "1500ms")
	waitFor(t, "20 idle children", 15*time.Second, func() bool { return a.status(t).Snapshot.Idle == 20 })
	errs := make(chan error, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := a.get()
			errs <- err
		}()
	}
	waitFor(t, "20 busy", 10*time.Second, func() bool { return a.status(t).Snapshot.Busy == 20 })
	a.signal(t, syscall.SIGTERM)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("in-flight request: %v", err)
		}
	}
	if code := a.wait(t, 15*time.Second); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

// TestReloadUnderLoad: SIGHUP twice while two clients loop; no request
// fails and the children are all new afterwards.
func TestReloadUnderLoad(t *testing.T) {
	a := startActd(t, nil, "--start-children", "3")
	old := map[int]bool{}
	for _, s := range a.status(t).Snapshot.Slots {
		old[s.PID] = true
	}
	stop := make(chan struct{})
	var failures sync.Map
	var served atomic.Int64
	var wg sync.WaitGroup
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := a.get(); err != nil {
					failures.Store(fmt.Sprint(c, i), err)
				}
				served.Add(1)
			}
		}()
	}
	// Paced by the clients' progress and the generations, not by the clock.
	moreServed := func(n int64) {
		want := served.Load() + n
		waitFor(t, fmt.Sprintf("%d requests served", want), 10*time.Second, func() bool { return served.Load() >= want })
	}
	for gen := 2; gen <= 3; gen++ {
		moreServed(50)
		a.signal(t, syscall.SIGHUP)
		waitFor(t, fmt.Sprintf("generation %d", gen), 10*time.Second, func() bool { return a.status(t).Snapshot.Generation >= gen })
	}
	moreServed(100)
	close(stop)
	wg.Wait()
	failures.Range(func(k, v any) bool { t.Errorf("request %v: %v", k, v); return true })
	waitFor(t, "only new children", 10*time.Second, func() bool {
		for _, s := range a.status(t).Snapshot.Slots {
			if old[s.PID] {
				return false
			}
		}
		return true
	})
	if g := a.status(t).Snapshot.Generation; g != 3 {
		t.Errorf("generation %d after two reloads, want 3", g)
	}
}

// TestMasterKilled: SIGKILL the master while a child serves a slow
// connection; the connection still gets its answer and every child exits.
func TestMasterKilled(t *testing.T) {
	a := startActd(t, nil, "--start-children", "3", "--handler-delay", "1s")
	var pids []int
	for _, s := range a.status(t).Snapshot.Slots {
		pids = append(pids, s.PID)
	}
	answer := make(chan error, 1)
	go func() { _, err := a.get(); answer <- err }()
	waitFor(t, "a busy child", 5*time.Second, func() bool { return a.status(t).Snapshot.Busy == 1 })
	a.signal(t, syscall.SIGKILL)
	if err := <-answer; err != nil {
		t.Errorf("connection in flight when the master died: %v", err)
	}
	waitFor(t, "every child gone", 5*time.Second, func() bool {
		for _, pid := range pids {
			if alive(pid) {
				return false
			}
		}
		return true
	})
}

// TestFatalExitNotifies: a configuration that cannot run tells systemd why
// (STATUS= and ERRNO=) before exiting 78.
func TestFatalExitNotifies(t *testing.T) {
	ns := newNotifySocket(t)
	cmd := exec.Command(os.Args[0], "--listen", "127.0.0.1:0", "--max-children", "0")
	cmd.Env = append(os.Environ(), envAsActd+"=1", ns.env())
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitConfig {
		t.Errorf("exit status %d, want %d", code, exitConfig)
	}
	waitFor(t, "ERRNO=", 5*time.Second, func() bool { return ns.count("ERRNO=") == 1 })
	if i := ns.index("STATUS=", -1); i < 0 || !strings.Contains(ns.all()[i], "max-children") {
		t.Errorf("notifications %q: want a STATUS= naming max-children", ns.all())
	}
}
