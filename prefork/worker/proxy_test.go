package worker

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/protocol"
)

// TestProxyDocs: docs/protocol.md and docs/operations.md state the Go
// library's header timeout, and protocol.md the address bound.
func TestProxyDocs(t *testing.T) {
	for file, wants := range map[string][]string{
		"../../docs/protocol.md": {
			fmt.Sprintf("the Go library's %d s", int(headerTimeout.Seconds())),
			fmt.Sprintf("at most %d bytes (`MAX_ADDR`)", protocol.MaxAddr),
		},
		"../../docs/operations.md": {fmt.Sprintf("or within %d s where a child accepted it", int(headerTimeout.Seconds()))},
	} {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(doc)), " ")
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q", file, want)
			}
		}
	}
}

// TestAdmit: a connection from a trusted peer is the child's once its
// header is read, whole or in parts, with the header's address (none for
// LOCAL); a malformed header, none, or one not whole within
// headerTimeout closes it; an untrusted peer's connection is taken as it
// is, its bytes unread.
func TestAdmit(t *testing.T) {
	headerTimeout = 5 * time.Second // a bound the sender keeps even on a loaded machine; "late" waits it out
	defer func() { headerTimeout = 10 * time.Second }()
	trusted, err := proxyproto.ParseEnv("0=127.0.0.1/32", 2)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Revision: proxySince, Proxy: trusted}
	const v1 = "PROXY TCP4 203.0.113.7 192.0.2.1 5555 80\r\n"
	for _, tc := range []struct {
		name     string
		listener int
		parts    []string // sent 50 ms apart
		admitted bool
		addr     string
		left     string // what the socket still holds
	}{
		{"whole", 0, []string{v1 + "GET /"}, true, "203.0.113.7:5555", "GET /"},
		{"in parts", 0, []string{v1[:5], v1[5:20], v1[20:]}, true, "203.0.113.7:5555", ""},
		{"LOCAL", 0, []string{"\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00GET"}, true, "", "GET"},
		{"malformed", 0, []string{"PROXY TCP4 x\r\nGET /"}, false, "", ""},
		{"none", 0, []string{"GET / HTTP/1.1\r\n"}, false, "", ""},
		{"late", 0, []string{v1[:20]}, false, "", ""},
		{"untrusted listener", 1, []string{v1}, true, "", v1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, client := tcpPair(t)
			defer client.Close()
			go func() {
				for _, p := range tc.parts {
					client.Write([]byte(p))
					time.Sleep(50 * time.Millisecond)
				}
			}()
			if got := env.admit(fd, tc.listener); got != tc.admitted {
				t.Fatalf("admitted %v, want %v", got, tc.admitted)
			}
			if !tc.admitted {
				if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
					t.Errorf("fd %d still open", fd)
				}
				return
			}
			defer unix.Close(fd)
			if got := clientOf(fd); got != tc.addr {
				t.Errorf("client %q, want %q", got, tc.addr)
			}
			time.Sleep(200 * time.Millisecond) // the sender is done
			buf := make([]byte, 100)
			n, _, _ := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			if string(buf[:max(n, 0)]) != tc.left {
				t.Errorf("left %q, want %q", buf[:max(n, 0)], tc.left)
			}
		})
	}
}

// tcpPair returns the server side of a loopback TCP connection as a
// blocking fd, and the client side.
func tcpPair(t *testing.T) (int, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f, err := server.(*net.TCPConn).File() // a blocking duplicate
	server.Close()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return fd, client
}
