package examples_test

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
)

// buildCWorker compiles examples/c-worker against libsystemd into dir, or
// skips t when gcc or libsystemd-dev is missing.
func buildCWorker(t *testing.T, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found (Debian package gcc): the C worker needs it")
	}
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "libsystemd").Output()
	if err != nil {
		t.Skip("pkg-config finds no libsystemd (Debian packages pkg-config, libsystemd-dev): the C worker needs it")
	}
	out := filepath.Join(dir, "c-worker")
	args := append([]string{"-Wall", "-Werror", "-o", out, "c-worker/worker.c"}, strings.Fields(string(flags))...)
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// TestCWorkerListenNames runs a C worker that finds its sockets with
// libsystemd's sd_listen_fds_with_names() under `actd --listen`, for TCP,
// IPv6 loopback and unix addresses, named and unnamed: libsystemd accepts
// every name actd passes in LISTEN_FDNAMES (it fails with EINVAL when a
// name holds ':', the separator), and each listener answers with the name
// docs/operations.md promises.
func TestCWorkerListenNames(t *testing.T) {
	bin := t.TempDir()
	worker := buildCWorker(t, bin)
	actd := build(t, bin, "github.com/actd/actd/cmd/actd")
	dir := t.TempDir()
	unixPath := filepath.Join(dir, "web.sock")
	named := pooltest.FreeAddr(t)
	type target struct{ network, addr, name string }
	targets := []target{
		{"unix", unixPath, "unix-" + unixPath},
		{"tcp", named, "admin"},
	}
	flags := []string{"--listen", "unix:" + unixPath, "--listen", "admin=" + named}
	if v6, err := freeAddr6(); err != nil {
		t.Logf("no IPv6 loopback here, [::1] not tried: %v", err)
	} else {
		_, port, _ := net.SplitHostPort(v6)
		targets = append(targets, target{"tcp", v6, "tcp-[--1]-" + port})
		flags = append(flags, "--listen", v6)
	}
	p := startPool(t, actd, "dispatch", []string{worker}, flags...)
	_, port, _ := net.SplitHostPort(p.addr)
	targets = append(targets, target{"tcp", p.addr, "tcp-127.0.0.1-" + port})
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			got, err := ask(tg.network, tg.addr)
			if err != nil {
				t.Fatalf("%s %s: %v", tg.network, tg.addr, err)
			}
			if want := "c-worker name=" + tg.name + " "; !strings.HasPrefix(got, want) {
				t.Fatalf("%s %s: got %q, want it to start with %q", tg.network, tg.addr, got, want)
			}
		})
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// freeAddr6 returns an [::1] address with a port that was free a moment ago.
func freeAddr6() (string, error) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// ask sends one HTTP/1.0 request and returns the answer's last line.
func ask(network, addr string) (string, error) {
	c, err := net.DialTimeout(network, addr, requestTimeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(requestTimeout))
	fmt.Fprint(c, "GET / HTTP/1.0\r\n\r\n")
	var last string
	for sc := bufio.NewScanner(c); sc.Scan(); {
		last = sc.Text()
	}
	return last, nil
}
