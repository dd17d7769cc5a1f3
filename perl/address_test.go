package perl_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// TestServerAddress: SERVER_NAME and SERVER_PORT are the local address a
// connection came in on, REMOTE_ADDR the client's, for a listener bound
// to one address (whose address the handler asks once) and for one bound
// to the wildcard 0.0.0.0 (where only the connection knows the address it
// reached), in one pool of two listeners, in both modes.
func TestServerAddress(t *testing.T) {
	for _, mode := range []string{"dispatch", "exclusive"} {
		t.Run(mode, func(t *testing.T) {
			_, wildPort, err := net.SplitHostPort(pooltest.FreeAddr(t))
			if err != nil {
				t.Fatal(err)
			}
			p := startPool(t, mode, "app.psgi", "--listen", "0.0.0.0:"+wildPort)
			_, port, err := net.SplitHostPort(p.addr)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Timeout: ioBound}
			for _, tc := range []struct {
				name, url, want string
			}{
				{"one address", "http://" + p.addr + "/address", "127.0.0.1 " + port + " 127.0.0.1"},
				{"wildcard", "http://127.0.0.1:" + wildPort + "/address", "127.0.0.1 " + wildPort + " 127.0.0.1"},
			} {
				for range 2 { // the second after the handler has seen the listener
					resp, err := client.Get(tc.url)
					if err != nil {
						t.Fatalf("%s: %v", tc.name, err)
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if got := strings.TrimSpace(string(b)); err != nil || got != tc.want {
						t.Errorf("%s: got %q, %v, want %q", tc.name, got, err, tc.want)
					}
				}
			}
		})
	}
}
