package proxyproto

import (
	"net"
	"net/netip"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAccept: Accept gives the peer Peer gives, IPv4-mapped IPv6
// unmapped (a dual-stack socket's IPv4 client), and none for a unix
// socket.
func TestAccept(t *testing.T) {
	for _, tc := range []struct{ name, network, listen, dial, want string }{
		{"tcp4", "tcp4", "127.0.0.1:0", "tcp4", "127.0.0.1"},
		{"tcp6", "tcp6", "[::1]:0", "tcp6", "::1"},
		{"mapped", "tcp", "[::]:0", "tcp4", "127.0.0.1"},
		{"unix", "unix", "", "unix", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			listen := tc.listen
			if tc.network == "unix" {
				listen = t.TempDir() + "/s"
			}
			ln, err := net.Listen(tc.network, listen)
			if err != nil {
				t.Skipf("no %s listener here: %v", tc.network, err)
			}
			defer ln.Close()
			f, err := ln.(interface{ File() (*os.File, error) }).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			dial := ln.Addr().String()
			if tc.name == "mapped" {
				dial = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), netip.MustParseAddrPort(dial).Port()).String()
			}
			c, err := net.Dial(tc.dial, dial)
			if err != nil {
				t.Skipf("cannot dial %s: %v", dial, err)
			}
			defer c.Close()
			fd, a, ok, err := Accept(int(f.Fd()), unix.SOCK_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if got := map[bool]string{true: a.String(), false: ""}[ok]; got != tc.want {
				t.Errorf("Accept: peer %q, want %q", got, tc.want)
			}
			if p, pok := Peer(fd); p != a || pok != ok {
				t.Errorf("Accept: %v, %v; Peer %v, %v", a, ok, p, pok)
			}
		})
	}
}
