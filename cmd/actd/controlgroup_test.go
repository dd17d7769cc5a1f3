package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestControlGroup: with --control-group, the control socket has that
// group and mode 0660, and a non-root user runs `actd status` through the
// group, and not without it. It runs as root (to switch users with
// setpriv) with the user nobody and the group nogroup.
func TestControlGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test runs actd status as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not found: the test runs actd status as another user with it")
	}
	if _, err := exec.Command("getent", "passwd", "nobody").Output(); err != nil {
		t.Skip("no user nobody")
	}
	group := "nogroup"
	if _, err := exec.Command("getent", "group", group).Output(); err != nil {
		t.Skip("no group nogroup")
	}
	a := startActd(t, nil, "--control-group", group)
	fi, err := os.Stat(a.ctl)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o660 {
		t.Errorf("control socket mode: got %v, want 0660", fi.Mode().Perm())
	}
	// The user needs the way in and the program: a copy of the test binary
	// in a directory all may enter, and the socket's directories open to all.
	bin := filepath.Join(a.dir, "actd")
	copyFile(t, os.Args[0], bin)
	for _, d := range []string{a.dir, filepath.Dir(a.dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(gid string) (string, error) {
		cmd := exec.Command(setpriv, "--reuid=nobody", "--regid="+gid, "--clear-groups", "--",
			bin, "status", "--control-socket", a.ctl)
		cmd.Env = append(os.Environ(), envAsActd+"=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(group); err != nil || !strings.Contains(out, "master pid") {
		t.Errorf("nobody in group %s: got %v:\n%s\nwant the scoreboard", group, err, out)
	}
	if out, err := run("12345"); err == nil || !strings.Contains(out, "permission denied") {
		t.Errorf("nobody outside the group: got %v:\n%s\nwant permission denied", err, out)
	}
}

// copyFile copies from to to, executable.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
