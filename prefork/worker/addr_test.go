package worker

import (
	"net"
	"path/filepath"
	"testing"
)

// TestConnAddr: a conn's addresses are the ones the net package sees from
// the other ends: LocalAddr the listener's, RemoteAddr the client's. IPv4,
// IPv6, a unix socket with a path and an abstract one; real sockets.
func TestConnAddr(t *testing.T) {
	tests := []struct {
		name, network, addr string
		remote              bool // the client has a name to compare
	}{
		{"IPv4", "tcp", "127.0.0.1:0", true},
		{"IPv6", "tcp6", "[::1]:0", true},
		{"unix path", "unix", "", false},
		{"unix abstract", "unix", "@actd-worker-test-" + t.Name(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := tt.addr
			if addr == "" {
				addr = filepath.Join(t.TempDir(), "s")
			}
			ln, err := net.Listen(tt.network, addr)
			if err != nil {
				t.Skipf("no %s listener on this machine: %v", tt.network, err)
			}
			defer ln.Close()
			c, peer := acceptedFrom(t, ln)
			defer peer.Close()
			defer c.Close()
			if got, want := c.LocalAddr().String(), ln.Addr().String(); got != want {
				t.Errorf("LocalAddr: got %s, want %s", got, want)
			}
			if got, want := c.LocalAddr().Network(), ln.Addr().Network(); got != want {
				t.Errorf("LocalAddr network: got %s, want %s", got, want)
			}
			if tt.remote {
				if got, want := c.RemoteAddr().String(), peer.LocalAddr().String(); got != want {
					t.Errorf("RemoteAddr: got %s, want %s", got, want)
				}
			}
		})
	}
}
