package prefork

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestQueueDepth: connections not yet accepted show in queueDepth, for TCP
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
			f, err := ln.(interface{ File() (*os.File, error) }).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fd := int(f.Fd())
			for want := range 4 {
				if got, ok := queueDepth(fd); !ok || got != want {
					t.Fatalf("queueDepth = %d, %v; want %d, true", got, ok, want)
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
