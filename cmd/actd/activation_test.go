package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSocketActivationNamedSockets: actd started by systemd-socket-activate
// with two named unix sockets serves both and keeps their names.
func TestSocketActivationNamedSockets(t *testing.T) {
	dir := t.TempDir()
	web, admin, ctl := filepath.Join(dir, "web.sock"), filepath.Join(dir, "admin.sock"), filepath.Join(dir, "ctl.sock")
	socketActivate(t, "-l", web, "-l", admin, "--fdname=web:admin", "-E", envAsActd+"=1",
		os.Args[0], "--control-socket", ctl, "--log-format", "text")
	waitFor(t, "sockets", 5*time.Second, func() bool { _, err := os.Stat(admin); return err == nil })
	for _, sock := range []string{web, admin} {
		if body, err := httpGet("unix", sock); err != nil || !strings.HasPrefix(body, "slot=") {
			t.Errorf("%s: %q, %v", sock, body, err)
		}
	}
	raw, err := fetchStatus(ctl)
	if err != nil {
		t.Fatal(err)
	}
	var doc statusDoc
	json.Unmarshal(raw, &doc)
	var names []string
	for _, l := range doc.Snapshot.Listeners {
		names = append(names, l.Name)
	}
	if got := strings.Join(names, ":"); got != "web:admin" {
		t.Errorf("listener names %q, want web:admin", got)
	}
}

// httpGet sends one HTTP/1.0 request and returns the last line of the answer.
func httpGet(network, addr string) (string, error) {
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	var last string
	for sc := bufio.NewScanner(c); sc.Scan(); {
		last = sc.Text()
	}
	return last, nil
}

// TestExecInetd: --exec runs a program per connection with the connection as
// stdin and stdout, and REMOTE_ADDR/REMOTE_PORT set for TCP.
func TestExecInetd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "--listen", addr, "--control-socket", filepath.Join(dir, "ctl"),
		"--exec", `/bin/sh -c 'echo "$REMOTE_ADDR $LISTEN_FDS"; read line; echo "got $line"'`)
	cmd.Env = append(os.Environ(), envAsActd+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var c net.Conn
	waitFor(t, "listening", 5*time.Second, func() bool { c, err = net.Dial("tcp", addr); return err == nil })
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "ping\n")
	out, _ := io.ReadAll(c)
	if want := "127.0.0.1 \ngot ping\n"; string(out) != want {
		t.Errorf("inetd answer %q, want %q", out, want)
	}
}

// socketActivate runs systemd-socket-activate with args (the test binary
// plays actd), killed at the end of the test, or skips the test where the
// tool is missing.
func socketActivate(t *testing.T, args ...string) {
	t.Helper()
	ssa, err := exec.LookPath("systemd-socket-activate")
	if err != nil {
		t.Skip("systemd-socket-activate not installed (Debian package systemd)")
	}
	cmd := exec.Command(ssa, args...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
}
