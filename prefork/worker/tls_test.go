package worker_test

import (
	"context"
	"crypto/tls"

	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/actd/actd/internal/testcert"
)

// TestListenerTLS runs net/http on worker.Listener under a real actd with
// --tls-cert, in dispatch, exclusive and filtered (children first) mode:
// the server's requests carry r.TLS (TLS 1.2 or later, ALPN http/1.1),
// served with the certificate given, and keep-alive works over TLS.
func TestListenerTLS(t *testing.T) {
	actd := buildActd(t)
	cert := testcert.Write(t, t.TempDir(), "server", 42)
	for _, mode := range []struct {
		name  string
		flags []string
	}{
		{"dispatch", []string{"--accept", "dispatch"}},
		{"exclusive", []string{"--accept", "exclusive"}},
		{"filter http", []string{"--accept", "dispatch", "--accept-filter", "http"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			flags := append([]string{"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile}, mode.flags[2:]...)
			p := startActdWith(t, actd, mode.flags[1], flags...)
			client := &http.Client{Timeout: bound, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: cert.Pool, ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}},
			}}
			defer client.CloseIdleConnections()
			var pids []string
			reused := 0
			for i := range 3 {
				trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
					if info.Reused {
						reused++
					}
				}}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
					"GET", "https://"+p.addr+"/tls", nil)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body := string(b)
				if !strings.Contains(body, "alpn=http/1.1") || strings.Contains(body, "plain") {
					t.Errorf("request %d: got %q, want a TLS request with ALPN http/1.1", i, body)
				}
				if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.TLS.PeerCertificates[0].SerialNumber.Cmp(cert.Serial) != 0 {
					t.Errorf("request %d: got connection state %+v, want TLS 1.2+ with serial %v", i, resp.TLS, cert.Serial)
				}
				pids = append(pids, pidOf(body))
			}
			if reused != 2 || pids[1] != pids[0] || pids[2] != pids[0] {
				t.Errorf("3 requests on a keep-alive client: got %d reused, pids %v; want 2 reused, one pid", reused, pids)
			}
			if err := p.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
}
