//go:build integration

package integration

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRemoveThenPurge is scenario 11: dpkg -r stops the default and the
// named pools with their sockets and removes the package's files but the
// configuration; dpkg -P removes the configuration and the enablement state.
func TestRemoveThenPurge(t *testing.T) {
	requireTool(t, "pgrep", "procps")
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t)}
	a.SetUp(pool)
	demoPort := freePort(t)
	demoAddr := fmt.Sprintf("127.0.0.1:%d", demoPort)
	a.WriteFile("/etc/actd/demo.conf", []byte("# the built-in handler\n"), 0o644)
	a.WriteFile("/etc/systemd/system/actd@demo.socket.d/listen.conf", socketDropIn(demoPort), 0o644)
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "enable", "--now", "actd@demo.socket")
	a.Activate(pool.Addr(), serviceUnit)
	a.Activate(demoAddr, "actd@demo.service")
	files, conffiles := a.packageFiles()

	a.Run("dpkg", "-r", "actd")
	for _, unit := range []string{socketUnit, serviceUnit, "actd@demo.socket", "actd@demo.service"} {
		if got := unitActiveState(t, a.Bus, unit); got != "inactive" {
			t.Errorf("%s after dpkg -r: got %s, want inactive", unit, got)
		}
	}
	for _, addr := range []string{pool.Addr(), demoAddr} {
		if _, err := get(addr, 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("request to %s after dpkg -r: got %v, want connection refused", addr, err)
		}
	}
	if out, code := a.ExitCode("pgrep", "-x", "actd"); code != 1 {
		t.Errorf("actd processes after dpkg -r: pgrep says %q (exit %d), want none", out, code)
	}
	for _, f := range files {
		if a.exists(f) {
			t.Errorf("%s after dpkg -r: still there, want it gone", f)
		}
	}
	for _, f := range conffiles {
		if !a.exists(f) {
			t.Errorf("conffile %s after dpkg -r: gone, want it kept until purge", f)
		}
	}

	a.Run("dpkg", "-P", "actd")
	for _, f := range conffiles {
		if a.exists(f) {
			t.Errorf("conffile %s after dpkg -P: still there, want it gone", f)
		}
	}
	if out := a.Run("find", "/etc/systemd/system", "-name", "actd*", "-type", "l"); out != "" {
		t.Errorf("systemd state after dpkg -P: got %q, want no actd symlinks or masks left", out)
	}
	if out, code := a.ExitCode("dpkg-query", "-W", "-f", "${Status}", "actd"); code == 0 && !strings.Contains(out, "not-installed") {
		t.Errorf("dpkg status after dpkg -P: got %q, want not installed", out)
	}
}

// packageFiles returns the regular files actd installed, and its conffiles.
func (a *ActdBox) packageFiles() (files, conffiles []string) {
	a.t.Helper()
	isConf := make(map[string]bool)
	for _, line := range strings.Split(a.Run("dpkg-query", "-W", "-f", "${Conffiles}", "actd"), "\n") {
		if fields := strings.Fields(line); len(fields) >= 1 {
			isConf[fields[0]] = true
			conffiles = append(conffiles, fields[0])
		}
	}
	for _, path := range strings.Split(a.Run("dpkg-query", "-L", "actd"), "\n") {
		if path == "" || isConf[path] {
			continue
		}
		if _, code := a.ExitCode("test", "-f", path); code == 0 {
			files = append(files, path)
		}
	}
	if len(files) == 0 || len(conffiles) == 0 {
		a.t.Fatalf("package lists %d files and %d conffiles, want some of each", len(files), len(conffiles))
	}
	return files, conffiles
}

// exists reports whether path exists in the box.
func (a *ActdBox) exists(path string) bool {
	a.t.Helper()
	_, code := a.ExitCode("test", "-e", path)
	return code == 0
}
