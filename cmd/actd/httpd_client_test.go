package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
)

// TestRepliesName: under the PROXY setting the replies name each
// connection's client in a well-framed response, kept alive or closing;
// made again in place, they cost no allocation once the buffers have
// grown, and none at all for a client named already.
func TestRepliesName(t *testing.T) {
	a := &replies{prefix: "slot=3 pid=42", proxied: true}
	a.make(nil, false)
	for _, tc := range []struct {
		client string
		body   string
	}{
		{"203.0.113.7:5555", "slot=3 pid=42 client=203.0.113.7:5555\n"},
		{"[2001:db8::1]:80", "slot=3 pid=42 client=[2001:db8::1]:80\n"},
		{"unknown", "slot=3 pid=42 client=unknown\n"},
		{"10.0.0.1:1", "slot=3 pid=42 client=10.0.0.1:1\n"},
	} {
		a.name([]byte(tc.client))
		for _, r := range []struct {
			b     []byte
			close bool
		}{{a.keep, false}, {a.closing, true}} {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(r.b)), nil)
			if err != nil {
				t.Fatalf("%s: %v in %q", tc.client, err, r.b)
			}
			body, _ := io.ReadAll(resp.Body)
			if string(body) != tc.body || resp.Close != r.close || a.size != len(tc.body) {
				t.Errorf("%s: body %q (size %d), close %v; want %q, %v", tc.client, body, a.size, resp.Close, tc.body, r.close)
			}
		}
	}
	clients := [][]byte{[]byte("203.0.113.7:5555"), []byte("203.0.113.8:5556")}
	i := 0
	if n := testing.AllocsPerRun(100, func() { a.name(clients[i%2]); i++ }); n != 0 {
		t.Errorf("a new client costs %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { a.name(clients[0]) }); n != 0 {
		t.Errorf("the same client costs %v allocations, want 0", n)
	}
}

// TestRepliesOpen: each connection's replies name its client (here the
// socket's peer), compared as an address from one connection to the
// next: a connection from another client, or after a TLS one named by
// text (openAddr), names its own.
func TestRepliesOpen(t *testing.T) {
	a := &replies{prefix: "slot=3 pid=42", proxied: true}
	a.make(nil, false)
	fds, names := make([]int, 2), make([]string, 2)
	for i := range fds {
		fds[i], names[i] = peerFD(t)
	}
	for _, step := range []struct {
		open int    // fds index, or -1 for openAddr(nil)
		want string // in the body
	}{
		{0, names[0]}, {0, names[0]}, {1, names[1]}, {0, names[0]}, {-1, "unknown"}, {0, names[0]},
	} {
		if step.open < 0 {
			a.openAddr(nil)
		} else {
			a.open(fds[step.open])
		}
		if !bytes.Contains(a.keep, []byte("client="+step.want+"\n")) || !bytes.Contains(a.closing, []byte("client="+step.want+"\n")) {
			t.Fatalf("after opening %d: %q, want client=%s", step.open, a.keep, step.want)
		}
	}
}

// peerFD returns the server side of a loopback TCP connection as an fd of
// its own, and its peer's address as text.
func peerFD(t *testing.T) (int, string) {
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
	t.Cleanup(func() { client.Close() })
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	f, err := server.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return int(f.Fd()), client.LocalAddr().String()
}
