package perl_test

import (
	"crypto/x509"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/actd/actd/internal/edgeclient"
	"github.com/actd/actd/internal/pooltest"
	"github.com/actd/actd/internal/testcert"
)

// The handler at the edge (issue 24) under a real revision-6 master, which
// sets ACTD_PROXY_FROM and ACTD_TLS itself: t/app.psgi's /client answers
// with REMOTE_ADDR, REMOTE_PORT and psgi.url_scheme.

// edgeModes are the paths a connection takes: a child that accepts and
// reads the header itself (exclusive; dispatch, after the master's A),
// and the http filter's children first, the master holding what is not
// ready (a header then a pause, a header in parts) and parking idle
// keep-alive connections.
var edgeModes = []struct {
	name     string
	mode     string
	filtered bool // the http filter: children first, the master holds
	flags    []string
}{
	{"exclusive", "exclusive", false, nil},
	{"dispatch", "dispatch", false, nil},
	{"filter http", "dispatch", true, []string{"--accept-filter", "http", "--hold-timeout", "60s"}},
}

// startEdge starts the handler with t/app.psgi in mode with flags, two
// children.
func startEdge(t *testing.T, mode string, flags ...string) *pool {
	t.Helper()
	return startPool(t, mode, "app.psgi", append([]string{"--start-children", "2", "--min-children", "2", "--max-children", "2"}, flags...)...)
}

// needSSL skips the test without IO::Socket::SSL.
func needSSL(t *testing.T) {
	t.Helper()
	if err := exec.Command("perl", "-MIO::Socket::SSL", "-e1").Run(); err != nil {
		t.Skipf("IO::Socket::SSL needed (Debian package libio-socket-ssl-perl): %v", err)
	}
}

// TestEdgeProxy: with --proxy-protocol-from 127.0.0.1/32, v1 and v2
// headers give REMOTE_ADDR and REMOTE_PORT on every path (at once, held,
// split, parked keep-alive); LOCAL and UNKNOWN keep the peer. Trusting only
// 10.0.0.0/8, a plain request is served and a PROXY line gets 400.
func TestEdgeProxy(t *testing.T) {
	for _, m := range edgeModes {
		t.Run(m.name, func(t *testing.T) {
			p := startEdge(t, m.mode, append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.flags...)...)
			if m.filtered {
				t.Run("at once: no handoff", func(t *testing.T) {
					edgeclient.CheckAtOnce(t, p.addr, func() (uint64, error) {
						s, err := p.Status()
						return s.Pool.Stats.Handoffs, err
					})
				})
			}
			edgeclient.CheckProxy(t, p.addr, nil)
			t.Run("malformed or none", func(t *testing.T) { edgeclient.CheckRefused(t, p.addr) })
			checkPaths(t, p, m.filtered)
		})
		t.Run(m.name+" untrusted", func(t *testing.T) {
			p := startEdge(t, m.mode, append([]string{"--proxy-protocol-from", "10.0.0.0/8"}, m.flags...)...)
			edgeclient.CheckUntrusted(t, p.addr)
		})
	}
}

// checkPaths: the pool saw no garbage and no complaints and, under the
// filter, held connections, handed them over (C) and parked keep-alive
// ones (K).
func checkPaths(t *testing.T, p *pool, filtered bool) {
	t.Helper()
	s, err := p.Status()
	st := s.Pool.Stats
	if err != nil || st.Garbage != 0 {
		t.Errorf("stats: got %+v, %v; want no garbage", st, err)
	}
	if filtered && (st.Held == 0 || st.Handoffs == 0 || st.Parked == 0) {
		t.Errorf("stats: got held %d, handoffs %d, parked %d; want each path taken", st.Held, st.Handoffs, st.Parked)
	}
	if c := p.complaints(); len(c) > 0 {
		t.Errorf("log complaints: %q", c)
	}
}

// TestEdgeTLS: with --tls-cert and --tls-key (and under --preload) the handler serves HTTPS to
// curl --cacert and keeps a TLS connection alive; with --proxy-protocol-from
// too, a PROXY header before the ClientHello gives the client's address on
// every path.
func TestEdgeTLS(t *testing.T) {
	needPlack(t)
	needSSL(t)
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	tlsFlags := []string{"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile}
	preload := edgeModes[len(edgeModes)-1] // the filter's paths, children forked from a zygote
	preload.name, preload.flags = "filter http, preload", append([]string{"--preload"}, preload.flags...)
	for _, m := range append(edgeModes[:len(edgeModes):len(edgeModes)], preload) {
		t.Run(m.name, func(t *testing.T) {
			p := startEdge(t, m.mode, append(tlsFlags, m.flags...)...)
			t.Run("curl", func(t *testing.T) { edgeclient.CheckCurl(t, p.addr, cert.CertFile) })
			t.Run("keep-alive", func(t *testing.T) { edgeclient.CheckTLSKeepAlive(t, p.addr, cert.Pool) })
		})
		t.Run(m.name+" proxy then TLS", func(t *testing.T) {
			p := startEdge(t, m.mode, append(append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, tlsFlags...), m.flags...)...)
			edgeclient.CheckProxy(t, p.addr, cert.Pool)
			s, err := p.Status()
			if st := s.Pool.Stats; err != nil || st.Garbage != 0 || m.filtered && st.Handoffs == 0 {
				t.Errorf("stats: got %+v, %v; want handoffs under the filter, no garbage", st, err)
			}
		})
	}
}

// TestEdgeSlowClientHello: under the http filter with one child, a client
// that sends 3 bytes of a ClientHello and waits is held by the master and
// pins no child: a good TLS client is served meanwhile; the same behind a
// PROXY header (the child reads it and gives the connection back with the
// address).
func TestEdgeSlowClientHello(t *testing.T) {
	needPlack(t)
	needSSL(t)
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	for _, tc := range []struct {
		name, header string
		flags        []string
	}{
		{"plain", "", nil},
		{"behind PROXY", edgeclient.V2("[2001:db8::7]:443"), []string{"--proxy-protocol-from", "127.0.0.1/32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPool(t, "dispatch", "app.psgi", append(tc.flags, "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--accept-filter", "http",
				"--start-children", "1", "--max-children", "1", "--min-spare", "0", "--max-spare", "1", "--hold-timeout", "5m")...)
			edgeclient.CheckSlowClientHello(t, p.addr, tc.header, cert.Pool, func() error {
				_, err := p.WaitHeld(func(s statusDoc) bool { return s.Pool.Held.Held > 0 && s.Pool.Idle == 1 })
				return err
			})
		})
	}
}

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
	for _, m := range edgeModes {
		t.Run(m.name, func(t *testing.T) {
			p := startEdge(t, m.mode, append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.flags...)...)
			edgeclient.CheckReported(t, p.addr, "/sleep?ms=3000", "GET /sleep from 203.0.113.7:5555", func(want string) error {
				_, err := p.WaitStatus(func(s statusDoc) bool {
					for _, sl := range s.Pool.Slots {
						if sl.Request == want {
							return true
						}
					}
					return false
				})
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
	for _, m := range edgeModes {
		t.Run(m.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "access.log")
			prefix := []string{"sh", "-c", `exec 9>>"$0"; ACTD_ACCESS_LOG=fd:9 exec "$@"`, file}
			p := startPoolWith(t, prefix, m.mode, "app.psgi", append([]string{"--proxy-protocol-from", "127.0.0.1/32",
				"--start-children", "2", "--min-children", "2", "--max-children", "2"}, m.flags...)...)
			edgeclient.CheckAccessLog(t, p.addr, file)
		})
	}
}

// TestEdgeMappedPeer: on a dual-stack listener (:PORT), an IPv4 client's
// peer is IPv4-mapped (::ffff:127.0.0.1) and matches the IPv4 entry
// 127.0.0.1/32: its PROXY header is read, in a child that accepts and
// through the filter.
func TestEdgeMappedPeer(t *testing.T) {
	for _, m := range edgeModes {
		t.Run(m.name, func(t *testing.T) {
			addr := pooltest.FreeAddr(t)
			_, port, _ := net.SplitHostPort(addr)
			startPoolAt(t, ":"+port, addr, nil, m.mode, "app.psgi", append([]string{"--proxy-protocol-from", "127.0.0.1/32",
				"--start-children", "2", "--min-children", "2", "--max-children", "2"}, m.flags...)...)
			for _, parts := range [][]string{{edgeclient.V1("203.0.113.7:5555") + edgeclient.Request},
				{edgeclient.V1("203.0.113.7:5555"), edgeclient.Pause, edgeclient.Request}} {
				bodies, err := edgeclient.Talk(addr, parts...)
				if err == nil {
					err = edgeclient.Check(bodies, parts, "203.0.113.7 5555")
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestEdgeTLSReload: a certificate changed in its files is served by the
// new generation after a reload (SIGHUP, as systemctl reload sends).
func TestEdgeTLSReload(t *testing.T) {
	for _, m := range edgeModes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			cert := testcert.Write(t, dir, "server", 1)
			tlsFlags := []string{"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile}
			p := startEdge(t, m.mode, append(tlsFlags, m.flags...)...)
			edgeclient.CheckReloadedCert(t, p.addr, "1", "2",
				func() error { testcert.Write(t, dir, "server", 2); return nil },
				func() error { return p.Cmd.Process.Signal(syscall.SIGHUP) })
		})
	}
}

// TestEdgeTwoListeners: settings by listener name reach the right
// listener (ACTD_PROXY_FROM and ACTD_TLS by index): HTTPS on web= (index
// 0) and PROXY headers on lb= (index 1); then plain HTTP on web= and
// PROXY then TLS on lb=.
func TestEdgeTwoListeners(t *testing.T) {
	needPlack(t)
	needSSL(t)
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	for _, layout := range []struct {
		name  string
		flags []string
		web   func(t *testing.T, addr string)
		lb    *x509.CertPool
	}{
		{"TLS on web, PROXY on lb", []string{"--tls-cert", "web=" + cert.CertFile, "--tls-key", "web=" + cert.KeyFile, "--proxy-protocol-from", "lb=127.0.0.1"},
			func(t *testing.T, addr string) { edgeclient.CheckTLSKeepAlive(t, addr, cert.Pool) }, nil},
		{"both on lb", []string{"--tls-cert", "lb=" + cert.CertFile, "--tls-key", "lb=" + cert.KeyFile, "--proxy-protocol-from", "lb=127.0.0.1"},
			func(t *testing.T, addr string) { edgeclient.CheckUntrusted(t, addr) }, cert.Pool},
	} {
		for _, m := range edgeModes {
			t.Run(layout.name+"/"+m.name, func(t *testing.T) {
				web, lb := pooltest.FreeAddr(t), pooltest.FreeAddr(t)
				startPoolAt(t, "web="+web, web, nil, m.mode, "app.psgi", append(append([]string{"--listen", "lb=" + lb,
					"--start-children", "2", "--min-children", "2", "--max-children", "2"}, layout.flags...), m.flags...)...)
				t.Run("web", func(t *testing.T) { layout.web(t, web) })
				t.Run("lb", func(t *testing.T) { edgeclient.CheckProxy(t, lb, layout.lb) })
				t.Run("lb without a header", func(t *testing.T) { edgeclient.CheckRefused(t, lb) })
			})
		}
	}
}
