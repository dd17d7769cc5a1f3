package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIssue24ServerCPU: a server's CPU is read around a run from its
// cgroup, which counts a child that left the tree (an orphan, whose time
// no parent in the tree collects), or without a group from its tree,
// which counts a child it waited for. The server is a shell that, once
// told on stdin, starts a child spinning for 50 ms of CPU (cpuBusy), then
// becomes sleep.
func TestIssue24ServerCPU(t *testing.T) {
	tests := []struct {
		name   string
		group  bool
		script string
	}{
		{"group, an orphan", true, "read _; (" + cpuBusy + " &); exec sleep 30"},
		{"tree, a child it waited for", false, "read _; " + cpuBusy + "; exec sleep 30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g *cpuGroup
			if tt.group {
				g = testGroup(t, "")
			}
			s, poke := startShell(t, tt.script, g, 0)
			used, ok := s.cpuAround(func() {
				poke()
				waitShell(t, s.pid(), "sleep\n", g)
			})
			if !ok || used < 30*time.Millisecond || used > 500*time.Millisecond {
				t.Errorf("got %v (read: %v), want 30 ms to 500 ms", used, ok)
			}
		})
	}
}

// startShell starts sh -c script, in g if it is not nil, waits until g
// has used cpu and the shell is alone in it (or, without g, until it
// runs), and returns it with a function that writes it a line. The shell
// is killed at the test's end.
func startShell(t *testing.T, script string, g *cpuGroup, cpu time.Duration) (*cpuServer, func()) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if g != nil {
		g.wrap(cmd)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); g != nil; time.Sleep(10 * time.Millisecond) {
		if used, err := g.usage(); err == nil && used >= cpu {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: used under %v of CPU in 20 s", g.dir, cpu)
		}
	}
	waitShell(t, cmd.Process.Pid, "sh\n", g) // in the group, waiting on stdin
	return &cpuServer{serverProc: &serverProc{cmd: cmd}, group: g}, func() { _, _ = stdin.Write([]byte("\n")) }
}

// testGroup makes a cgroup for a test (named after it and suffix, so a
// test can make several) and removes it at its end, or skips the test if
// none can be made.
func testGroup(t *testing.T, suffix string) *cpuGroup {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("no /proc/self/mountinfo: %v", err)
	}
	g, err := newCPUGroup(parseCgroupMounts(info), strings.ReplaceAll(t.Name(), "/", "-")+suffix)
	if err != nil {
		t.Skipf("no writable cgroup that counts CPU (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := g.remove(5 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return g
}

// waitShell waits until process pid runs comm and, if g is set, is the
// only process left in g (an orphan it started has exited). It fails the
// test after 20 s.
func waitShell(t *testing.T, pid int, comm string, g *cpuGroup) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		alone := true
		if g != nil {
			procs, _ := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
			alone = strings.TrimSpace(string(procs)) == strconv.Itoa(pid)
		}
		if string(got) == comm && alone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d: comm %q, want %q alone in its group, within 20 s", pid, got, comm)
		}
	}
}

func TestIssue24CPUFrom(t *testing.T) {
	v1, v2 := &cpuGroup{dir: "/x"}, &cpuGroup{dir: "/y", v2: true}
	noGroup := errors.New("no cgroup v1 cpuacct mount")
	tests := []struct {
		name    string
		servers map[string]*cpuServer
		want    []string // in the text
		wantNot []string
	}{
		{"all in v1 groups", map[string]*cpuServer{"i24-go": {group: v1}, "i24-go-proxy": {group: v1}},
			[]string{"each server's own cgroup, cgroup v1 `cpuacct.usage`, in ns"}, []string{"except", "/proc/PID/stat"}},
		{"v1 and v2", map[string]*cpuServer{"i24-go": {group: v1}, "i24-wsgi": {group: v2}},
			[]string{"cgroup v1 `cpuacct.usage`, in ns and cgroup v2 `cpu.stat` usage_usec, in µs"}, []string{"except"}},
		{"none: the trees", map[string]*cpuServer{"i24-go": {groupErr: noGroup}, "i24-wsgi": {groupErr: noGroup}},
			[]string{"`/proc/PID/stat`", "no cgroup could be made: i24-go (no cgroup v1 cpuacct mount)"}, []string{"own cgroup"}},
		{"one without", map[string]*cpuServer{"i24-go": {group: v1}, "i24-wsgi": {groupErr: noGroup}},
			[]string{"own cgroup", "except i24-wsgi (no cgroup v1 cpuacct mount): the process tree's"}, nil},
		{"no server", map[string]*cpuServer{}, []string{"no server ran"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := issue24CPUFrom(tt.servers)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want %q in it", got, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("got %q, want no %q in it", got, w)
				}
			}
		})
	}
}
