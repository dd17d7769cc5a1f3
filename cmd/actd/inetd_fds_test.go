package main

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExecGetsOnlyItsConnection: the program --exec runs per connection
// gets its connection as stdin and stdout and no other socket: not the
// listeners, not the child's back-channel (the worker library marks them
// close-on-exec), so neither it nor what it leaves running can accept on
// the pool's port.
func TestExecGetsOnlyItsConnection(t *testing.T) {
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			cmd := exec.Command(os.Args[0], "--listen", addr, "--accept", mode,
				"--control-socket", filepath.Join(t.TempDir(), "ctl"),
				"--exec", `/bin/sh -c 'for f in /proc/$$/fd/*; do echo "${f##*/} $(readlink $f)"; done'`)
			cmd.Env = append(os.Environ(), envAsActd+"=1")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			var c net.Conn
			waitFor(t, "listening", 5*time.Second, func() bool { c, err = net.Dial("tcp", addr); return err == nil })
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			out, _ := io.ReadAll(c)
			sockets := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if fd, target, _ := strings.Cut(line, " "); strings.HasPrefix(target, "socket:") {
					sockets[fd] = target
				}
			}
			if len(sockets) != 2 || sockets["0"] == "" || sockets["0"] != sockets["1"] {
				t.Errorf("the program's sockets: got %v, want its connection at 0 and 1 only; its fds:\n%s", sockets, out)
			}
		})
	}
}
