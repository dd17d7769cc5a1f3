package activation

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skipWithoutIPv6 skips t when this machine cannot listen on [::1].
func skipWithoutIPv6(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln.Close()
}

func TestListen(t *testing.T) {
	tests := []struct {
		name   string
		addr   func(t *testing.T) string
		needV6 bool
	}{
		{name: "tcp4", addr: func(*testing.T) string { return "127.0.0.1:0" }},
		{name: "tcp6", addr: func(*testing.T) string { return "[::1]:0" }, needV6: true},
		{name: "unix", addr: func(t *testing.T) string { return "unix:" + filepath.Join(t.TempDir(), "web.sock") }},
		// An abstract name is the network namespace's: the whole TempDir
		// path is unique among tests running anywhere, its base ("001") is not.
		{name: "abstract", addr: func(t *testing.T) string { return "unix:@actd-test" + t.TempDir() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needV6 {
				skipWithoutIPv6(t)
			}
			addr := tt.addr(t)
			socks, err := Listen([]string{addr})
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			defer Close(socks)
			if want := DefaultName(addr); len(socks) != 1 || socks[0].Name != want {
				t.Fatalf("got %+v, want one socket named %q", socks, want)
			}
			checkOwnedListener(t, socks[0].FD)
			st, _ := inspectFD(socks[0].FD)
			if !st.Nonblock {
				t.Fatalf("got blocking fd, want the non-blocking mode Go created it with")
			}
			acceptOne(t, socks[0].FD)
		})
	}
}

func TestListenSeveralInOrder(t *testing.T) {
	addrs := []string{"127.0.0.1:0", "unix:" + filepath.Join(t.TempDir(), "a.sock"), "admin=127.0.0.1:0"}
	names := []string{"tcp-127.0.0.1-0", "unix-" + addrs[1][len("unix:"):], "admin"}
	socks, err := Listen(addrs)
	if err != nil {
		t.Fatalf("got error %v, want nil", err)
	}
	defer Close(socks)
	if len(socks) != len(addrs) {
		t.Fatalf("got %d sockets, want %d", len(socks), len(addrs))
	}
	for i, s := range socks {
		if s.Name != names[i] {
			t.Fatalf("socket %d: got name %q, want %q", i, s.Name, names[i])
		}
		checkOwnedListener(t, s.FD)
		acceptOne(t, s.FD)
	}
}

func TestListenUnixSocketFileStays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.sock")
	socks, err := Listen([]string{"unix:" + path})
	if err != nil {
		t.Fatalf("got error %v, want nil", err)
	}
	defer Close(socks)
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("socket file after Listen: got %v, want it present", err)
	}
	acceptOne(t, socks[0].FD)
}

func TestListenExistingUnixPath(t *testing.T) {
	tests := []struct {
		name        string
		prepare     func(t *testing.T, path string)
		errContains string
	}{
		{name: "stale socket is replaced", prepare: staleSocket},
		{name: "live socket is refused", prepare: liveSocket, errContains: "another process is listening"},
		{name: "regular file is refused", prepare: regularFile, errContains: "exists and is not a socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "web.sock")
			tt.prepare(t, path)
			socks, err := Listen([]string{"unix:" + path})
			if tt.errContains == "" {
				if err != nil {
					t.Fatalf("got error %v, want nil", err)
				}
				defer Close(socks)
				acceptOne(t, socks[0].FD)
				return
			}
			if err == nil {
				Close(socks)
				t.Fatalf("got nil error, want one containing %q", tt.errContains)
			}
			if !strings.Contains(err.Error(), tt.errContains) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got error %q, want it to contain %q and the path", err, tt.errContains)
			}
		})
	}
}

// staleSocket leaves a socket file at path that nothing listens on.
func staleSocket(t *testing.T, path string) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

// liveSocket listens on path for the rest of the test.
func liveSocket(t *testing.T, path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

// regularFile writes a plain file at path.
func regularFile(t *testing.T, path string) {
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestListenErrorClosesOpenedSockets(t *testing.T) {
	before := openFDs(t)
	_, err := Listen([]string{"127.0.0.1:0", "127.0.0.1:99999"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:99999") {
		t.Fatalf("got error %v, want one naming 127.0.0.1:99999", err)
	}
	if after := openFDs(t); after != before {
		t.Fatalf("got %d open fds after the failed Listen, want %d", after, before)
	}
}

func TestSocketsFallsBackToListen(t *testing.T) {
	t.Setenv("LISTEN_FDS", "")
	os.Unsetenv("LISTEN_FDS")
	socks, err := Sockets(nil)
	if !errors.Is(err, ErrNoSockets) || socks != nil {
		t.Fatalf("no env, no addrs: got %v, %v; want nil, ErrNoSockets", socks, err)
	}
	socks, err = Sockets([]string{"127.0.0.1:0"})
	if err != nil || len(socks) != 1 || socks[0].Name != "tcp-127.0.0.1-0" {
		t.Fatalf("no env, one addr: got %+v, %v; want one socket named tcp-127.0.0.1-0", socks, err)
	}
	defer Close(socks)
	acceptOne(t, socks[0].FD)
}
