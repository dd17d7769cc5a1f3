package edgeclient

import (
	"crypto/x509"
	"net"
	"syscall"
	"testing"

	"github.com/actd/actd/internal/pooltest"
	"github.com/actd/actd/internal/testcert"
)

// The edge suite: the tests every language's worker passes under a real
// revision-6 master, which sets ACTD_PROXY_FROM and ACTD_TLS itself. Each
// language gives a Worker; the suite starts its pools and runs the
// checks of this package on them.

// Worker is how a language's tests start its worker under actd.
type Worker struct {
	// Start starts actd listening on listen (a --listen value, such as
	// ADDR, :PORT or NAME=ADDR) that clients reach at addr, in accept
	// mode with flags (actd's), running the worker's client app (it
	// answers with REMOTE_ADDR, REMOTE_PORT and the URL scheme), and
	// returns it ready; a failed start fails t.
	Start func(t *testing.T, listen, addr, mode string, flags ...string) *pooltest.Proc
	// NeedTLS skips t where the worker cannot serve TLS; nil if it can.
	NeedTLS func(t *testing.T)
	// Complaints returns the warnings and errors in p's log that fail a
	// test; nil where the log is not checked.
	Complaints func(p *pooltest.Proc) []string
}

// Mode is one path a connection takes: a child that accepts and reads the
// header itself (exclusive; dispatch, after the master's A), or the http
// filter's children first, the master holding what is not ready (a header
// then a pause, a header in parts) and parking idle keep-alive
// connections (Filtered).
type Mode struct {
	Name     string
	Accept   string // --accept
	Filtered bool   // the http filter: children first, the master holds
	Flags    []string
}

// twoChildren keeps a pool at 2 children.
var twoChildren = []string{"--start-children", "2", "--min-children", "2", "--max-children", "2"}

// Modes returns the paths of Mode, each a pool of 2 children.
func Modes() []Mode {
	return []Mode{
		{"exclusive", "exclusive", false, twoChildren},
		{"dispatch", "dispatch", false, twoChildren},
		{"filter http", "dispatch", true, append([]string{"--accept-filter", "http", "--hold-timeout", "60s"}, twoChildren...)},
	}
}

// start is w.Start on a fresh loopback address.
func (w Worker) start(t *testing.T, mode string, flags ...string) (*pooltest.Proc, string) {
	t.Helper()
	addr := pooltest.FreeAddr(t)
	return w.Start(t, addr, addr, mode, flags...), addr
}

// needTLS calls w.NeedTLS if set.
func (w Worker) needTLS(t *testing.T) {
	t.Helper()
	if w.NeedTLS != nil {
		w.NeedTLS(t)
	}
}

// CheckProxy: with --proxy-protocol-from 127.0.0.1/32, v1 and v2 headers
// give REMOTE_ADDR and REMOTE_PORT on every path of Modes (at once, held,
// split, parked keep-alive), with no handoff for what comes at once under
// the filter; LOCAL and UNKNOWN keep the peer; a malformed header or none
// is refused; the pool saw no garbage (and each path under the filter).
// Trusting only 10.0.0.0/8, a plain request is served and a PROXY line
// gets 400.
func (w Worker) CheckProxy(t *testing.T) {
	for _, m := range Modes() {
		t.Run(m.Name, func(t *testing.T) {
			p, addr := w.start(t, m.Accept, append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.Flags...)...)
			if m.Filtered {
				t.Run("at once: no handoff", func(t *testing.T) {
					CheckAtOnce(t, addr, func() (uint64, error) {
						s, err := p.Status()
						return s.Pool.Stats.Handoffs, err
					})
				})
			}
			CheckProxy(t, addr, nil)
			t.Run("malformed or none", func(t *testing.T) { CheckRefused(t, addr) })
			w.checkPaths(t, p, m.Filtered)
		})
		t.Run(m.Name+" untrusted", func(t *testing.T) {
			_, addr := w.start(t, m.Accept, append([]string{"--proxy-protocol-from", "10.0.0.0/8"}, m.Flags...)...)
			CheckUntrusted(t, addr)
		})
	}
}

// checkPaths: the pool saw no garbage and no complaints and, under the
// filter, held connections, handed them over (C) and parked keep-alive
// ones (K).
func (w Worker) checkPaths(t *testing.T, p *pooltest.Proc, filtered bool) {
	t.Helper()
	s, err := p.Status()
	st := s.Pool.Stats
	if err != nil || st.Garbage != 0 {
		t.Errorf("stats: got %+v, %v; want no garbage", st, err)
	}
	if filtered && (st.Held == 0 || st.Handoffs == 0 || st.Parked == 0) {
		t.Errorf("stats: got held %d, handoffs %d, parked %d; want each path taken", st.Held, st.Handoffs, st.Parked)
	}
	if w.Complaints != nil {
		if c := w.Complaints(p); len(c) > 0 {
			t.Errorf("log complaints: %q", c)
		}
	}
}

// CheckTLS: with --tls-cert and --tls-key, on every path of Modes and
// under --preload (the filter's paths, children forked from a zygote), the
// worker serves HTTPS to curl --cacert and keeps a TLS connection alive;
// with --proxy-protocol-from too, a PROXY header before the ClientHello
// gives the client's address on every path, with no garbage and, under
// the filter, handoffs.
func (w Worker) CheckTLS(t *testing.T) {
	w.needTLS(t)
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	tlsFlags := []string{"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile}
	modes := Modes()
	preload := modes[len(modes)-1]
	preload.Name, preload.Flags = "filter http, preload", append([]string{"--preload"}, preload.Flags...)
	for _, m := range append(modes, preload) {
		t.Run(m.Name, func(t *testing.T) {
			_, addr := w.start(t, m.Accept, append(tlsFlags, m.Flags...)...)
			t.Run("curl", func(t *testing.T) { CheckCurl(t, addr, cert.CertFile) })
			t.Run("keep-alive", func(t *testing.T) { CheckTLSKeepAlive(t, addr, cert.Pool) })
		})
		t.Run(m.Name+" proxy then TLS", func(t *testing.T) {
			p, addr := w.start(t, m.Accept, append(append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, tlsFlags...), m.Flags...)...)
			CheckProxy(t, addr, cert.Pool)
			s, err := p.Status()
			if st := s.Pool.Stats; err != nil || st.Garbage != 0 || m.Filtered && st.Handoffs == 0 {
				t.Errorf("stats: got %+v, %v; want handoffs under the filter, no garbage", st, err)
			}
		})
	}
}

// CheckSlowClientHello: under the http filter with one child, a client
// that sends 3 bytes of a ClientHello and waits is held by the master and
// pins no child: a good TLS client is served meanwhile; the same behind a
// PROXY header (the child reads it and gives the connection back with the
// address).
func (w Worker) CheckSlowClientHello(t *testing.T) {
	w.needTLS(t)
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	for _, tc := range []struct {
		name, header string
		flags        []string
	}{
		{"plain", "", nil},
		{"behind PROXY", V2("[2001:db8::7]:443"), []string{"--proxy-protocol-from", "127.0.0.1/32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, addr := w.start(t, "dispatch", append(tc.flags, "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--accept-filter", "http",
				"--start-children", "1", "--max-children", "1", "--min-spare", "0", "--max-spare", "1", "--hold-timeout", "5m")...)
			CheckSlowClientHello(t, addr, tc.header, cert.Pool, func() error {
				_, err := p.WaitHeld(func(s pooltest.Status) bool { return s.Pool.Held.Held > 0 && s.Pool.Idle == 1 })
				return err
			})
		})
	}
}

// CheckMappedPeer: on a dual-stack listener (:PORT), an IPv4 client's
// peer is IPv4-mapped (::ffff:127.0.0.1) and matches the IPv4 entry
// 127.0.0.1/32: its PROXY header is read, at once and after a pause, on
// every path of Modes.
func (w Worker) CheckMappedPeer(t *testing.T) {
	for _, m := range Modes() {
		t.Run(m.Name, func(t *testing.T) {
			addr := pooltest.FreeAddr(t)
			_, port, _ := net.SplitHostPort(addr)
			w.Start(t, ":"+port, addr, m.Accept, append([]string{"--proxy-protocol-from", "127.0.0.1/32"}, m.Flags...)...)
			for _, parts := range [][]string{{V1("203.0.113.7:5555") + Request},
				{V1("203.0.113.7:5555"), Pause, Request}} {
				bodies, err := Talk(addr, parts...)
				if err == nil {
					err = Check(bodies, parts, "203.0.113.7 5555")
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// CheckTLSReload: on every path of Modes, a certificate changed in its
// files is served by the new generation after a reload (SIGHUP to the
// master).
func (w Worker) CheckTLSReload(t *testing.T) {
	w.needTLS(t)
	for _, m := range Modes() {
		t.Run(m.Name, func(t *testing.T) {
			dir := t.TempDir()
			cert := testcert.Write(t, dir, "server", 1)
			p, addr := w.start(t, m.Accept, append([]string{"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile}, m.Flags...)...)
			CheckReloadedCert(t, addr, "1", "2",
				func() error { testcert.Write(t, dir, "server", 2); return nil },
				func() error { return p.Cmd.Process.Signal(syscall.SIGHUP) })
		})
	}
}

// CheckTwoListeners: settings by listener name reach the right listener
// (ACTD_PROXY_FROM and ACTD_TLS by index), on every path of Modes: HTTPS
// on web= (index 0) and PROXY headers on lb= (index 1); then plain HTTP
// (a PROXY line refused) on web= and PROXY then TLS on lb=; lb= refuses a
// connection without a header.
func (w Worker) CheckTwoListeners(t *testing.T) {
	w.needTLS(t)
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	for _, layout := range []struct {
		name  string
		flags []string
		web   func(t *testing.T, addr string)
		lb    *x509.CertPool
	}{
		{"TLS on web, PROXY on lb", []string{"--tls-cert", "web=" + cert.CertFile, "--tls-key", "web=" + cert.KeyFile, "--proxy-protocol-from", "lb=127.0.0.1"},
			func(t *testing.T, addr string) { CheckTLSKeepAlive(t, addr, cert.Pool) }, nil},
		{"both on lb", []string{"--tls-cert", "lb=" + cert.CertFile, "--tls-key", "lb=" + cert.KeyFile, "--proxy-protocol-from", "lb=127.0.0.1"},
			func(t *testing.T, addr string) { CheckUntrusted(t, addr) }, cert.Pool},
	} {
		for _, m := range Modes() {
			t.Run(layout.name+"/"+m.Name, func(t *testing.T) {
				web, lb := pooltest.FreeAddr(t), pooltest.FreeAddr(t)
				w.Start(t, "web="+web, web, m.Accept, append(append([]string{"--listen", "lb=" + lb}, layout.flags...), m.Flags...)...)
				t.Run("web", func(t *testing.T) { layout.web(t, web) })
				t.Run("lb", func(t *testing.T) { CheckProxy(t, lb, layout.lb) })
				t.Run("lb without a header", func(t *testing.T) { CheckRefused(t, lb) })
			})
		}
	}
}
