package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChildFDTable: an fd the master inherited without close-on-exec does
// not reach the children, and the listener and back-channel sit where the
// layout says.
func TestChildFDTable(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	dir := t.TempDir()
	ctl := filepath.Join(dir, "ctl")
	cmd := exec.Command(os.Args[0], "--listen", "unix:"+filepath.Join(dir, "s"), "--control-socket", ctl, "--start-children", "1")
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	// fds 3-8 in actd, without close-on-exec; a child dup2s its own layout over 3 and 4 only
	cmd.ExtraFiles = []*os.File{w, w, w, w, w, w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	a := &actd{ctl: ctl}
	a.waitControl(t)
	waitFor(t, "an idle child", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle == 1 })
	child := a.status(t).Snapshot.Slots[0].PID
	leak, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(w.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	fdDir := "/proc/" + strconv.Itoa(child) + "/fd/"
	for _, fd := range []string{"3", "4"} { // the listener, the back-channel
		if got, _ := os.Readlink(fdDir + fd); !strings.HasPrefix(got, "socket:") {
			t.Errorf("child fd %s is %q, want a socket", fd, got)
		}
	}
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if target, _ := os.Readlink(fdDir + e.Name()); target == leak {
			t.Errorf("child fd %s is the master's inherited pipe %s", e.Name(), leak)
		}
	}
}
