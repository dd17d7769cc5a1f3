//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bootTimeout bounds how long a box may take to reach running or degraded.
const bootTimeout = 60 * time.Second

// Box is a throwaway systemd running as PID 1 of its own namespaces on an
// overlay of the host's root. The test that boots it owns it; it is torn
// down when the test ends.
type Box struct {
	// Name is the box's hostname and part of its cgroup's name.
	Name string
	// PID is the box's systemd as the host sees it.
	PID int

	t       *testing.T
	cgroup  string
	unshare *exec.Cmd
	exited  chan struct{}
	log     *logBuffer
	v1      []string // v1 cgroups (memory, name=systemd) the box joins; none on pure v2
}

// boxNameClean turns a test name into a cgroup and host name.
var boxNameClean = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// BoxConfig says how a box differs from the default.
type BoxConfig struct {
	// OwnNetwork gives the box its own network namespace with only lo, up.
	// Reach it with Box.Dial. By default the box shares the host's network.
	OwnNetwork bool
	// Memory gives the box a memory controller that enforces MemoryMax=
	// (memorybox_test.go): on a hybrid host, the v1 memory hierarchy.
	// The test skips where there is none.
	Memory bool
}

// NewBox boots a box for t that shares the host's network and waits until
// its systemd reports running or degraded. See NewBoxWith.
func NewBox(t *testing.T) *Box {
	t.Helper()
	return NewBoxWith(t, BoxConfig{})
}

// NewBoxWith boots a box for t as cfg says and waits until its systemd
// reports running or degraded. It skips t when this host cannot boot one
// (see requireBoxTools and newBoxCgroup) and fails t when the boot fails.
// The box is killed and its cgroups removed in t.Cleanup, whatever the
// test's outcome.
func NewBoxWith(t *testing.T, cfg BoxConfig) *Box {
	t.Helper()
	requireBoxTools(t)
	if cfg.OwnNetwork {
		requireTool(t, "ip", "iproute2")
	}
	name := strings.ToLower(strings.Trim(boxNameClean.ReplaceAllString(t.Name(), "-"), "-"))
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	b := &Box{Name: name, t: t, exited: make(chan struct{}), log: new(logBuffer)}
	b.cgroup = newBoxCgroup(t, name) // its cleanup runs after the kill below
	if cfg.Memory {
		b.v1 = memoryCgroups(t, b.cgroup, name) // likewise
	}
	dir := t.TempDir()
	b.start(dir, cfg)
	t.Cleanup(b.kill)
	if err := b.waitBooted(); err != nil {
		t.Fatalf("boot box %s: %v\nboot log:\n%s", name, err, b.log)
	}
	t.Logf("box %s: systemd is PID %d", name, b.PID)
	return b
}

// startOnOwnThread starts cmd from an OS thread that no other goroutine
// will ever run on and that never exits. Pdeathsig follows the thread that
// forked, not the process: started from a pooled thread, unshare (and the
// whole box) would be killed the moment that thread exits — as one does
// when a goroutine that locked it (Box.Dial's, in the box's network
// namespace) returns.
func startOnOwnThread(cmd *exec.Cmd) error {
	started := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the test binary
		started <- cmd.Start()
		select {}
	}()
	return <-started
}

// start launches unshare with the boot script inside the box's cgroup.
func (b *Box) start(dir string, cfg BoxConfig) {
	t := b.t
	script := filepath.Join(dir, "boot")
	if err := os.WriteFile(script, []byte(bootScript), 0o700); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "rt")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	cg, err := os.Open(b.cgroup)
	if err != nil {
		t.Fatalf("open box cgroup: %v", err)
	}
	defer cg.Close()
	args := []string{"--pid", "--fork", "--kill-child", "--mount", "--uts", "--ipc", "--cgroup"}
	network := "host"
	if cfg.OwnNetwork {
		args = append(args, "--net")
		network = "own"
	}
	layout := "v2"
	if len(b.v1) > 0 {
		layout = "hybrid"
	}
	cmd := exec.Command("unshare", append(args, "bash", script, root, b.Name, network, layout)...)
	if len(b.v1) > 0 {
		cmd = joinV1(b.v1, cmd)
	}
	cmd.Stdin = nil
	cmd.Stdout = b.log
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setsid:      true,
		Pdeathsig:   syscall.SIGKILL,
		UseCgroupFD: true,
		CgroupFD:    int(cg.Fd()),
	}
	if err := startOnOwnThread(cmd); err != nil {
		t.Fatalf("start unshare: %v", err)
	}
	b.unshare = cmd
	go func() {
		cmd.Wait()
		close(b.exited)
	}()
}

// waitBooted finds the box's PID 1 (unshare's only child, once it has exec'd
// systemd) and waits for is-system-running to say running or degraded.
// It returns an error if unshare exits first or bootTimeout passes.
func (b *Box) waitBooted() error {
	deadline := time.Now().Add(bootTimeout)
	state := ""
	for time.Now().Before(deadline) {
		select {
		case <-b.exited:
			return fmt.Errorf("unshare exited: %v", b.unshare.ProcessState)
		default:
		}
		if b.PID == 0 {
			b.PID = systemdChild(b.unshare.Process.Pid)
		}
		if b.PID != 0 {
			out, _ := b.exec(context.Background(), nil, "systemctl", "is-system-running")
			state = strings.TrimSpace(string(out))
			if state == "running" || state == "degraded" {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	jobs := ""
	if b.PID != 0 {
		out, _ := b.exec(context.Background(), nil, "systemctl", "list-jobs", "--no-pager")
		jobs = string(out)
	}
	return fmt.Errorf("not running after %v (last state %q, PID %d); jobs:\n%s", bootTimeout, state, b.PID, jobs)
}

// systemdChild returns the PID of parent's child once that child runs
// systemd, or 0.
func systemdChild(parent int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent, parent))
	if err != nil {
		return 0
	}
	for _, field := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(field)
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(comm)) == "systemd" {
			return pid
		}
	}
	return 0
}

// kill ends the box: SIGKILL to its PID 1 ends every process in its PID
// namespace and with them its mounts; unshare then exits. The cgroup cleanup,
// registered earlier, runs after this.
func (b *Box) kill() {
	if b.PID != 0 {
		if err := syscall.Kill(b.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			b.t.Errorf("kill box %s PID %d: %v", b.Name, b.PID, err)
		}
	}
	select {
	case <-b.exited:
		return
	case <-time.After(10 * time.Second):
	}
	// PID 1 never showed up or did not die: unshare's --kill-child ends it.
	b.unshare.Process.Kill()
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		b.t.Errorf("box %s: unshare (PID %d) did not exit", b.Name, b.unshare.Process.Pid)
	}
}
