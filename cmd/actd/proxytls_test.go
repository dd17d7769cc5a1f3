package main

import (
	"os"
	"strings"
	"testing"

	"github.com/actd/actd/internal/edgeclient"
	"github.com/actd/actd/internal/testcert"
)

// TestProxyThenTLS: the built-in handler with --proxy-protocol-from and
// --tls-cert on one listener: a client sends a PROXY header (v1 or v2,
// whole, or with a wait before the ClientHello, or LOCAL), then does the
// TLS handshake on the same connection; every answer, two on the kept-alive
// connection, names the client of the header (client=HOST:PORT), or the
// peer after LOCAL; in exclusive mode, dispatch and under the http filter
// (children first, the master holding the header).
func TestProxyThenTLS(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	v1, v2 := edgeclient.V1("203.0.113.7:5555"), edgeclient.V2("[2001:db8::7]:443")
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"exclusive", []string{"--accept", "exclusive"}},
		{"dispatch", nil},
		{"filter http", []string{"--accept-filter", "http"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			addr := freeAddr(t)
			startActd(t, nil, append([]string{"--listen", "web=" + addr, "--proxy-protocol-from", "web=127.0.0.1",
				"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--start-children", "2"}, mode.args...)...)
			for _, tc := range []struct {
				name   string
				header []string // sent before the handshake
				want   string
			}{
				{"v1", []string{v1}, "client=203.0.113.7:5555"},
				{"v2", []string{v2}, "client=[2001:db8::7]:443"},
				{"v2, wait", []string{v2, edgeclient.Pause}, "client=[2001:db8::7]:443"},
				{"v2 in two parts", []string{v2[:9], edgeclient.Pause, v2[9:]}, "client=[2001:db8::7]:443"},
				{"v2 LOCAL", []string{edgeclient.V2Local}, "client=127.0.0.1:"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c, err := edgeclient.Dial(addr)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					if _, err := c.Talk(tc.header...); err != nil {
						t.Fatal(err)
					}
					if err := c.StartTLS(cert.Pool); err != nil {
						t.Fatal(err)
					}
					bodies, err := c.Talk(edgeclient.Request, edgeclient.Pause, edgeclient.Request)
					if err != nil || len(bodies) != 2 {
						t.Fatalf("got %q, %v; want 2 answers", bodies, err)
					}
					for i, b := range bodies {
						if !strings.HasPrefix(b, "200 OK slot=") || !strings.Contains(b, tc.want) {
							t.Errorf("answer %d: got %q, want 200 with %q", i+1, b, tc.want)
						}
					}
				})
			}
		})
	}
}

// TestProxyThenTLSNetHTTP: net/http on worker.Listener, with
// --proxy-protocol-from and --tls-cert, sees the client of the PROXY
// header sent before the ClientHello in Request.RemoteAddr.
func TestProxyThenTLSNetHTTP(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	for _, mode := range [][]string{{"--accept", "exclusive"}, {"--accept-filter", "http"}} {
		t.Run(mode[len(mode)-1], func(t *testing.T) {
			addr := freeAddr(t)
			startActd(t, nil, append(append([]string{"--listen", "web=" + addr, "--proxy-protocol-from", "127.0.0.1",
				"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile}, mode...), "--", os.Args[0], remoteArg)...)
			c, err := edgeclient.Dial(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Talk(edgeclient.V1("203.0.113.7:5555"), edgeclient.Pause); err != nil {
				t.Fatal(err)
			}
			if err := c.StartTLS(cert.Pool); err != nil {
				t.Fatal(err)
			}
			bodies, err := c.Talk(edgeclient.Request, edgeclient.Pause, edgeclient.Request)
			if err != nil || len(bodies) != 2 {
				t.Fatalf("got %q, %v; want 2 answers", bodies, err)
			}
			for _, b := range bodies {
				if b != "200 OK remote=203.0.113.7:5555" {
					t.Errorf("got %q, want the client from the header", b)
				}
			}
		})
	}
}
