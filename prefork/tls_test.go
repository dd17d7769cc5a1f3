package prefork_test

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/internal/testcert"
	"github.com/actd/actd/prefork"
	"github.com/actd/actd/protocol"
)

// tlsConfig returns fastConfig(mode) with cert for every listener.
func tlsConfig(t *testing.T, mode protocol.Mode, cert testcert.Cert) prefork.Config {
	t.Helper()
	chain, err := os.ReadFile(cert.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(cert.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fastConfig(mode)
	cfg.TLS = map[string][]byte{"": append(chain, key...)}
	return cfg
}

// tlsRequest sends line to the pool over TLS and returns the answer.
func tlsRequest(addr, line string, cert testcert.Cert) (string, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: cert.Pool, ServerName: "localhost"})
	if err != nil {
		return "", err
	}
	defer c.Close()
	return exchange(c, line)
}

// TestTLSEcho: with Config.TLS, Go workers (worker.Serve) terminate TLS in
// dispatch and exclusive mode.
func TestTLSEcho(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 5)
	for _, mode := range []protocol.Mode{protocol.Dispatch, protocol.Exclusive} {
		t.Run(mode.String(), func(t *testing.T) {
			p := startPool(t, tlsConfig(t, mode, cert), "echo")
			ans, err := tlsRequest(p.addr, "hello", cert)
			if err != nil || !strings.HasPrefix(ans, "slot=") || !strings.HasSuffix(ans, " hello") {
				t.Errorf("got %q, %v; want slot=K pid=P hello", ans, err)
			}
		})
	}
}

// TestTLSNeedsCapability: children of a worker of revision 5 (no tls
// capability) stop the pool at start with a *FieldError for tls-cert, and
// a reload into them is abandoned (key tls-cert) while the old children
// serve on over TLS.
func TestTLSNeedsCapability(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 5)
	cfg := tlsConfig(t, protocol.Dispatch, cert)
	t.Run("start", func(t *testing.T) {
		err := runRefused(t, cfg, "echo5")
		var fe *prefork.FieldError
		if !errors.As(err, &fe) || fe.Field != "tls-cert" || !strings.Contains(err.Error(), "no tls capability") {
			t.Errorf("Run: got %v, want a FieldError for tls-cert", err)
		}
	})
	t.Run("reload", func(t *testing.T) {
		p := startPool(t, cfg, "echo")
		into := cfg // fastConfig's start-timeout: echo5 says hello, late on a loaded machine
		into.Program = workerProgram(p.program, "echo5")
		_, ready, err := p.Reload(into)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			t.Fatal("the reload's channel still open after 10s")
		}
		if a := snapshot(t, p).Abandoned; a == nil || a.Key != "tls-cert" {
			t.Errorf("got abandoned %+v, want the reload abandoned for key tls-cert", a)
		}
		if ans, err := tlsRequest(p.addr, "after", cert); err != nil || !strings.HasSuffix(ans, " after") {
			t.Errorf("after the abandoned reload: got %q, %v; want an answer over TLS", ans, err)
		}
	})
}

// TestTLSUnknownListener: a certificate for a name no listener has is a
// *FieldError for tls-cert from New and from Reload.
func TestTLSUnknownListener(t *testing.T) {
	cfg := fastConfig(protocol.Dispatch)
	p := startPool(t, cfg, "echo")
	bad := cfg
	bad.TLS = map[string][]byte{"www": []byte("x")}
	var fe *prefork.FieldError
	if _, err := p.reload(bad); !errors.As(err, &fe) || fe.Field != "tls-cert" {
		t.Errorf("Reload: got %v, want a FieldError for tls-cert", err)
	}
	if _, err := prefork.New(bad, []prefork.Listener{{Name: "test", FD: p.fd}}, nil); !errors.As(err, &fe) || fe.Field != "tls-cert" {
		t.Errorf("New: got %v, want a FieldError for tls-cert", err)
	}
}
