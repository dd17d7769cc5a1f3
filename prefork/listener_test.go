package prefork_test

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/actd/actd/prefork"
)

// TestQueueDepth: connections not yet accepted show in QueueDepth, for TCP
// (TCP_INFO) and unix (sock_diag) listeners alike.
func TestQueueDepth(t *testing.T) {
	for _, tc := range []struct{ network, addr string }{
		{"tcp", "127.0.0.1:0"},
		{"unix", filepath.Join(t.TempDir(), "q.sock")},
	} {
		t.Run(tc.network, func(t *testing.T) {
			ln, err := net.Listen(tc.network, tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			fd := dupListener(t, ln)
			for want := range 4 {
				if got, ok := prefork.QueueDepth(fd); !ok || got != want {
					t.Fatalf("QueueDepth = %d, %v; want %d, true", got, ok, want)
				}
				c, err := net.Dial(tc.network, ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
			}
		})
	}
}
