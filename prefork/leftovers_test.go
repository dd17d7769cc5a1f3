package prefork_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/cgroup"
	"github.com/actd/actd/internal/fdwait"
	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// spawner answers each line as echo does, but first starts a grandchild in
// the background for these, and answers its PID ("gpid=N"); it then
// keeps the connection until the client sends one more line (or closes),
// so that what the master does at the connection's end (a recycled child's
// leftovers killed) waits for the test to have looked at the grandchild:
//
//	spawn           sleep 60, run as any program is run (os/exec): it gets
//	                only the fds not marked close-on-exec
//	spawn-listener  the test binary as a "blackhole" that is given the first
//	                listener as fd 3 on purpose (a program that clears
//	                close-on-exec, a worker library that never set it) and
//	                accepts on it, answering nothing
func spawner() worker.Handler {
	id := "slot=" + os.Getenv(protocol.EnvSlot) + " pid=" + strconv.Itoa(os.Getpid())
	return func(c net.Conn) {
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		var cmd *exec.Cmd
		switch strings.TrimSpace(line) {
		case "spawn":
			cmd = exec.Command("sleep", "60")
		case "spawn-listener":
			cmd = exec.Command("/proc/self/exe")
			cmd.Env = append(os.Environ(), envWorker+"=blackhole")
			cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(protocol.FirstListenerFD), "listener")}
		}
		if cmd != nil {
			if err := cmd.Start(); err != nil {
				fmt.Fprintf(c, "%s error %v\n", id, err)
				return
			}
			line = fmt.Sprintf("gpid=%d\n", cmd.Process.Pid)
		}
		fmt.Fprintf(c, "%s %s", id, line)
		if cmd != nil {
			r.ReadString('\n') // the test's go-ahead (spawnGrandchild)
		}
	}
}

// blackhole accepts on fd 3 and holds every connection, unanswered.
func blackhole() int {
	ln, err := net.FileListener(os.NewFile(uintptr(protocol.FirstListenerFD), "listener"))
	if err != nil {
		return 1
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		blackholed = append(blackholed, c) // kept open, never answered
	}
}

// blackholed are the connections blackhole took.
var blackholed []net.Conn

// spawnGrandchild asks the pool's child to start a grandchild (spawner),
// runs look on its PID while the child still holds that connection, then
// lets the child finish it, and returns the PID; the grandchild is killed
// at the end of the test. Until look returns nothing the master does at
// the connection's end has happened: a recycled child's grandchild, killed
// then, may otherwise be dead and reaped (by PID 1) within milliseconds
// of the answer, before a test that was slow to run opens its pidfd or
// reads its cgroup.
func spawnGrandchild(t *testing.T, addr, how string, look func(pid int)) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	defer c.Close()
	ans, err := exchange(c, how)
	_, after, ok := strings.Cut(ans, "gpid=")
	pid, convErr := strconv.Atoi(after)
	if err != nil || !ok || convErr != nil {
		t.Fatalf("%s: got %q, %v, want gpid=N", how, ans, err)
	}
	t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL) })
	look(pid)
	if _, err := fmt.Fprintln(c, "done"); err != nil {
		t.Fatalf("%s: go-ahead to the child: %v", how, err)
	}
	return pid
}

// TestGrandchildGetsNoListener: in every mode the Go worker library marks
// the listeners and the back-channel close-on-exec, so a program a child
// runs (here sleep, in the background) holds no socket of the pool: it
// cannot keep the port open nor accept on it once the child is gone.
func TestGrandchildGetsNoListener(t *testing.T) {
	for _, mode := range []protocol.Mode{protocol.Dispatch, protocol.Exclusive, protocol.Shared} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := fastConfig(mode)
			cfg.StartChildren, cfg.MinChildren, cfg.MaxChildren = 1, 1, 1
			tp := startPool(t, cfg, "spawner")
			spawnGrandchild(t, tp.addr, "spawn", func(pid int) {
				fds := fdTargets(t, pid)
				if len(fds) == 0 {
					t.Fatalf("grandchild %d: no fds read", pid)
				}
				for fd, target := range fds {
					if strings.HasPrefix(target, "socket:") {
						t.Errorf("grandchild %d fd %s: got %s, want no socket of the pool (fds: %v)", pid, fd, target, fds)
					}
				}
			})
		})
	}
}

// fdTargets returns what each open fd of process pid points to.
func fdTargets(t *testing.T, pid int) map[string]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd/", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("grandchild %d: %v", pid, err)
	}
	out := map[string]string{}
	for _, e := range entries {
		out[e.Name()], _ = os.Readlink(dir + e.Name())
	}
	return out
}

// TestGrandchildKilledWithChild is issue 22 finding 9 with per-child
// cgroups: a child starts a grandchild that holds the listener without
// close-on-exec and accepts on it, then the child is recycled (one
// connection each). The master kills the grandchild as it reaps the child
// (it stayed in the child's slot-N leaf), counts it in Stats.Orphans, and
// every later client is answered: none is swallowed by the grandchild.
func TestGrandchildKilledWithChild(t *testing.T) {
	delegate(t)
	cfg := fastConfig(protocol.Dispatch)
	cfg.StartChildren, cfg.MinChildren, cfg.MaxChildren = 1, 1, 2
	cfg.MaxConnPerChild = 1
	tp := startPool(t, cfg, "spawner")
	pidfd := -1
	pid := spawnGrandchild(t, tp.addr, "spawn-listener", func(pid int) {
		var err error
		if pidfd, err = unix.PidfdOpen(pid, 0); err != nil {
			t.Fatalf("grandchild %d: %v", pid, err)
		}
		t.Cleanup(func() { unix.Close(pidfd) })
		if group := readGroup(pid); !strings.Contains(group, "/slot-") {
			t.Fatalf("grandchild %d: got cgroup %q, want its child's slot-N leaf", pid, group)
		}
	})
	if ok, err := fdwait.Readable(pidfd, 10*time.Second); !ok || err != nil {
		t.Fatalf("grandchild %d still runs 10s after its child served its one connection (orphans killed: %d)",
			pid, snapshot(t, tp).Stats.Orphans)
	}
	answered := 0
	for i := range 12 {
		if ans, err := request(tp.addr, fmt.Sprintf("good %d", i)); err == nil && strings.HasSuffix(ans, fmt.Sprintf("good %d", i)) {
			answered++
		}
	}
	if answered != 12 {
		t.Errorf("good clients: got %d of 12 answered, want 12", answered)
	}
	if n := snapshot(t, tp).Stats.Orphans; n < 1 {
		t.Errorf("Stats.Orphans: got %d, want at least 1", n)
	}
}

// readGroup returns pid's cgroup-v2 path ("0::" of /proc/PID/cgroup).
func readGroup(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for _, line := range strings.Split(string(data), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			return path
		}
	}
	return ""
}

// delegate moves the test process into a throwaway cgroup-v2 group made
// below its own and marked delegated (trusted.delegate, as systemd marks a
// unit's group under Delegate=yes), so that a pool started next arranges
// per-child groups (cgroup.Arrange). At the end of the test the process
// moves back and the group is killed and removed. It skips the test
// without root or a writable cgroup v2.
func delegate(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes a delegated cgroup-v2 group")
	}
	own, err := cgroup.Self()
	if err != nil || own.V2 == "" || unix.Access(filepath.Join(own.V2, "cgroup.procs"), unix.W_OK) != nil {
		t.Skipf("no writable cgroup-v2 group (%+v, %v)", own, err)
	}
	dir, err := os.MkdirTemp(own.V2, "actd-test-")
	if err != nil {
		t.Skipf("cannot make a cgroup-v2 group: %v", err)
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	t.Cleanup(func() {
		if err := os.WriteFile(filepath.Join(own.V2, "cgroup.procs"), self, 0); err != nil {
			t.Errorf("moving back to %s: %v", own.V2, err)
		}
		removeGroup(t, dir)
	})
	if err := unix.Setxattr(dir, "trusted.delegate", []byte("1"), 0); err != nil {
		t.Skipf("cannot mark %s delegated: %v", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), self, 0); err != nil {
		t.Skipf("cannot move into %s: %v", dir, err)
	}
	if g, _ := cgroup.Self(); !g.Delegated() {
		t.Fatalf("%+v: got not delegated, want delegated", g)
	}
}

// removeGroup kills what is left in group dir's leaves and removes them and
// dir.
func removeGroup(t *testing.T, dir string) {
	leaves, _ := filepath.Glob(filepath.Join(dir, "*", "cgroup.procs"))
	for _, procs := range leaves {
		leaf := filepath.Dir(procs)
		os.WriteFile(filepath.Join(leaf, "cgroup.kill"), []byte("1"), 0)
		removeDir(t, leaf)
	}
	removeDir(t, dir)
}

// removeDir removes the cgroup dir, waiting up to 10 s for its processes
// to be gone.
func removeDir(t *testing.T, dir string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("rmdir %s: %v", dir, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
