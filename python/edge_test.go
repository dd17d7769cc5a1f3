package python_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/actd/actd/internal/edgeclient"
	"github.com/actd/actd/internal/pooltest"
)

// The adapter at the edge (issue 24) under a real revision-6 master, which
// sets ACTD_PROXY_FROM and ACTD_TLS itself: testdata/client.py answers
// with REMOTE_ADDR, REMOTE_PORT and wsgi.url_scheme. The checks shared
// with the Perl handler are edgeclient.Worker's.

// edgeWorker starts the adapter with client:app.
var edgeWorker = edgeclient.Worker{
	Start: func(t *testing.T, listen, addr, mode string, flags ...string) *pooltest.Proc {
		t.Helper()
		args := append([]string{"--listen", listen, "--accept", mode}, flags...)
		return startActd(t, addr, append(args, "--", python(t), "-m", "actd.wsgi", "client:app")...).Proc
	},
}

// TestEdgeProxy: PROXY headers on every path, trusted and not
// (edgeclient.Worker.CheckProxy).
func TestEdgeProxy(t *testing.T) { edgeWorker.CheckProxy(t) }

// TestEdgeTLS: HTTPS on every path and under --preload, and PROXY then TLS
// (edgeclient.Worker.CheckTLS).
func TestEdgeTLS(t *testing.T) { edgeWorker.CheckTLS(t) }

// TestEdgeSlowClientHello: a slow ClientHello pins no child
// (edgeclient.Worker.CheckSlowClientHello).
func TestEdgeSlowClientHello(t *testing.T) { edgeWorker.CheckSlowClientHello(t) }

// TestEdgeMappedPeer: an IPv4-mapped peer matches an IPv4 entry
// (edgeclient.Worker.CheckMappedPeer).
func TestEdgeMappedPeer(t *testing.T) { edgeWorker.CheckMappedPeer(t) }

// TestEdgeTLSReload: a changed certificate is served after SIGHUP
// (edgeclient.Worker.CheckTLSReload).
func TestEdgeTLSReload(t *testing.T) { edgeWorker.CheckTLSReload(t) }

// TestEdgeTwoListeners: settings by listener name reach the right listener
// (edgeclient.Worker.CheckTwoListeners).
func TestEdgeTwoListeners(t *testing.T) { edgeWorker.CheckTwoListeners(t) }

// TestEdgeForwarded: --forwarded-allow-ips trusts X-Forwarded-For and
// X-Forwarded-Proto from the client a PROXY header names, not from others.
func TestEdgeForwarded(t *testing.T) {
	p := startPool(t, "dispatch", []string{python(t), "-m", "actd.wsgi", "--forwarded-allow-ips", "203.0.113.0/24", "client:app"},
		append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, filterFlags...)...)
	edgeclient.CheckForwarded(t, p.addr)
}

// TestEdgeReported: a request in hand behind a PROXY header shows its
// client in actd status ("GET /slow from HOST:PORT", the adapter's R
// report), as the Go library's does, on a connection the child accepted
// and on one the master handed over.
func TestEdgeReported(t *testing.T) {
	for _, m := range edgeclient.Modes() {
		t.Run(m.Name, func(t *testing.T) {
			p := startPool(t, m.Accept, []string{python(t), "-m", "actd.wsgi", "validated:app"},
				append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.Flags...)...)
			file := filepath.Join(t.TempDir(), "go")
			edgeclient.CheckReported(t, p.addr, "/slow?"+file, "GET /slow from 203.0.113.7:5555", func(want string) error {
				_, err := p.WaitStatus(func(s statusDoc) bool { return s.Serves(want) })
				return err
			}, func() { os.WriteFile(file, nil, 0o600) })
		})
	}
}

// TestEdgeAccessLog: the access log's %h is the PROXY header's client, on
// a connection the child accepted and on one the master handed over
// (ACTD_ACCESS_LOG=fd:9 set by sh in the worker's command, as a master
// with --access-log FILE sets it).
func TestEdgeAccessLog(t *testing.T) {
	for _, m := range edgeclient.Modes() {
		t.Run(m.Name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "access.log")
			script := `exec 9>>"$0"; ACTD_ACCESS_LOG=fd:9 exec "$1" -m actd.wsgi client:app`
			p := startPool(t, m.Accept, []string{"sh", "-c", script, file, python(t)},
				append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.Flags...)...)
			edgeclient.CheckAccessLog(t, p.addr, file)
		})
	}
}
