package perl_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/actd/actd/internal/edgeclient"
	"github.com/actd/actd/internal/pooltest"
)

// The handler at the edge (issue 24) under a real revision-6 master, which
// sets ACTD_PROXY_FROM and ACTD_TLS itself: t/app.psgi's /client answers
// with REMOTE_ADDR, REMOTE_PORT and psgi.url_scheme. The checks shared
// with the Python adapter are edgeclient.Worker's; here they also want no
// complaint in actd's log.

// edgeWorker starts the handler with t/app.psgi.
var edgeWorker = edgeclient.Worker{
	Start: func(t *testing.T, listen, addr, mode string, flags ...string) *pooltest.Proc {
		t.Helper()
		return startPoolAt(t, listen, addr, nil, mode, "app.psgi", flags...).Proc
	},
	NeedTLS:    func(t *testing.T) { needPlack(t); needSSL(t) },
	Complaints: func(p *pooltest.Proc) []string { return (&pool{Proc: p}).complaints() },
}

// needSSL skips the test without IO::Socket::SSL.
func needSSL(t *testing.T) {
	t.Helper()
	if err := exec.Command("perl", "-MIO::Socket::SSL", "-e1").Run(); err != nil {
		t.Skipf("IO::Socket::SSL needed (Debian package libio-socket-ssl-perl): %v", err)
	}
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

// TestEdgeForwarded: ACTD_FORWARDED_ALLOW_IPS trusts X-Forwarded-For and
// X-Forwarded-Proto from the client a PROXY header names, not from others.
func TestEdgeForwarded(t *testing.T) {
	p := startPoolWith(t, []string{"env", "ACTD_FORWARDED_ALLOW_IPS=203.0.113.0/24"}, "dispatch", "app.psgi",
		"--proxy-protocol-from", "127.0.0.1/32", "--accept-filter", "http", "--start-children", "2", "--max-children", "2")
	edgeclient.CheckForwarded(t, p.addr)
}

// TestEdgeReported: a request in hand behind a PROXY header shows its
// client in actd status ("GET /sleep from HOST:PORT", the handler's R
// report), as the Go library's does, on a connection the child accepted
// and on one the master handed over.
func TestEdgeReported(t *testing.T) {
	for _, m := range edgeclient.Modes() {
		t.Run(m.Name, func(t *testing.T) {
			p := startPool(t, m.Accept, "app.psgi", append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.Flags...)...)
			edgeclient.CheckReported(t, p.addr, "/sleep?ms=3000", "GET /sleep from 203.0.113.7:5555", func(want string) error {
				_, err := p.WaitStatus(func(s statusDoc) bool { return s.Serves(want) })
				return err
			}, func() {})
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
			prefix := []string{"sh", "-c", `exec 9>>"$0"; ACTD_ACCESS_LOG=fd:9 exec "$@"`, file}
			p := startPoolWith(t, prefix, m.Accept, "app.psgi", append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.Flags...)...)
			edgeclient.CheckAccessLog(t, p.addr, file)
		})
	}
}
