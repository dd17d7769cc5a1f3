//go:build integration

package integration

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildCWorker compiles examples/c-worker against libsystemd on the host
// (the box sees the host's libraries), or skips t without gcc or
// libsystemd-dev.
func buildCWorker(t *testing.T) string {
	t.Helper()
	requireTool(t, "gcc", "gcc")
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "libsystemd").Output()
	if err != nil {
		t.Skip("pkg-config finds no libsystemd (Debian packages pkg-config, libsystemd-dev): the C worker needs it")
	}
	out := filepath.Join(t.TempDir(), "c-worker")
	args := append([]string{"-Wall", "-Werror", "-o", out, "../../examples/c-worker/worker.c"}, strings.Fields(string(flags))...)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// TestCWorkerUnderSocketUnit (issue 11 item 1): a C worker that finds its
// sockets with libsystemd's sd_listen_fds_with_names() runs as actd@cw under
// the packaged actd@.socket, with a TCP, an IPv6 loopback and a unix
// address in its drop-in. Every socket answers with the name systemd gave
// it (FileDescriptorName=%i), passed on through actd to the children.
func TestCWorkerUnderSocketUnit(t *testing.T) {
	worker := buildCWorker(t)
	a := NewActdBox(t)
	a.CopyIn(worker, "/usr/local/bin/c-worker")
	port := freePort(t)
	v4 := fmt.Sprintf("127.0.0.1:%d", port)
	listen := fmt.Sprintf("[Socket]\nListenStream=%s\nListenStream=/run/cw.sock\n", v4)
	v6 := ""
	if ln, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Logf("no IPv6 loopback here, [::1] not tried: %v", err)
	} else {
		v6 = ln.Addr().String()
		ln.Close()
		listen += "ListenStream=" + v6 + "\n"
	}
	a.WriteFile("/etc/actd/cw.conf", []byte("worker = /usr/local/bin/c-worker\nstart-children = 2\n"), 0o644)
	a.WriteFile("/etc/systemd/system/actd@cw.socket.d/listen.conf", []byte(listen), 0o644)
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "start", "actd@cw.socket")
	a.Activate(v4, "actd@cw.service")

	targets := []struct{ network, addr string }{
		{"tcp", v4},
		{"unix", fmt.Sprintf("/proc/%d/root/run/cw.sock", a.PID)},
	}
	if v6 != "" {
		targets = append(targets, struct{ network, addr string }{"tcp", v6})
	}
	for _, tg := range targets {
		t.Run(tg.network+" "+tg.addr, func(t *testing.T) {
			got, err := answerLine(tg.network, tg.addr)
			if err != nil {
				t.Fatalf("request: %v\n%s", err, a.Journal("actd@cw.service"))
			}
			if want := "c-worker name=cw slot="; !strings.HasPrefix(got, want) {
				t.Errorf("got %q, want it to start with %q", got, want)
			}
		})
	}
}

// answerLine sends one HTTP/1.0 request and returns the answer's last line.
func answerLine(network, addr string) (string, error) {
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(c, "GET / HTTP/1.0\r\n\r\n")
	var last string
	for sc := bufio.NewScanner(c); sc.Scan(); {
		last = sc.Text()
	}
	return last, nil
}
