package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/internal/testcert"
)

// tlsBound bounds each wait of these tests; none is a speed assertion.
const tlsBound = 30 * time.Second

// tlsDial opens a TLS connection to a's socket that trusts pool, offering
// ALPN h2 and http/1.1.
func tlsDial(t *testing.T, a *actd, cert testcert.Cert) *tls.Conn {
	t.Helper()
	raw, err := net.DialTimeout("unix", a.sock, tlsBound)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(tlsBound))
	c := tls.Client(raw, &tls.Config{RootCAs: cert.Pool, ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}})
	if err := c.Handshake(); err != nil {
		raw.Close()
		t.Fatalf("handshake: %v", err)
	}
	return c
}

// tlsGet sends GET path on c, keeping it open, and returns the body.
func tlsGet(t *testing.T, c *tls.Conn, r *bufio.Reader, path string) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: got %s, %q, %v; want 200", path, resp.Status, b, err)
	}
	return string(b)
}

// servedSerial returns the serial of the certificate a new connection to
// a is served with.
func servedSerial(t *testing.T, a *actd, cert testcert.Cert) *big.Int {
	t.Helper()
	c := tlsDial(t, a, cert)
	defer c.Close()
	tlsGet(t, c, bufio.NewReader(c), "/")
	return c.ConnectionState().PeerCertificates[0].SerialNumber
}

// TestTLSBuiltIn: the built-in handler serves HTTPS with --tls-cert in
// dispatch, exclusive and filtered (children first) mode: TLS 1.2 or
// later, ALPN http/1.1, the certificate given, several requests on one
// kept-alive connection, /bytes/N whole; curl --cacert agrees.
func TestTLSBuiltIn(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"dispatch", nil},
		{"exclusive", []string{"--accept", "exclusive"}},
		{"filter http", []string{"--accept-filter", "http"}},
		{"filter data", []string{"--accept-filter", "data"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startActd(t, nil, append([]string{"--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--start-children", "1"}, tc.flags...)...)
			c := tlsDial(t, a, cert)
			defer c.Close()
			st := c.ConnectionState()
			if st.Version < tls.VersionTLS12 || st.NegotiatedProtocol != "http/1.1" || st.PeerCertificates[0].SerialNumber.Cmp(cert.Serial) != 0 {
				t.Errorf("got version %x, ALPN %q, serial %v; want TLS 1.2+, http/1.1, serial %v",
					st.Version, st.NegotiatedProtocol, st.PeerCertificates[0].SerialNumber, cert.Serial)
			}
			r := bufio.NewReader(c)
			first := tlsGet(t, c, r, "/")
			second := tlsGet(t, c, r, "/")
			if !strings.HasPrefix(first, "slot=") || second != first {
				t.Errorf("two requests on one connection: got %q and %q, want one child's slot=... twice", first, second)
			}
			if body := tlsGet(t, c, r, "/bytes/100000"); len(body) != 100000 || body[99999] != bodyByte(99999) {
				t.Errorf("/bytes/100000: got %d bytes, want 100000", len(body))
			}
			if tc.name == "dispatch" {
				checkCurl(t, a, cert)
			}
		})
	}
}

// checkCurl runs curl --cacert against a, if curl is installed.
func checkCurl(t *testing.T, a *actd, cert testcert.Cert) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Log("curl not installed: skipping the curl check")
		return
	}
	out, err := exec.Command(curl, "-sS", "--max-time", "30", "--cacert", cert.CertFile, "--unix-socket", a.sock,
		"https://localhost/", "https://localhost/").CombinedOutput()
	if err != nil || strings.Count(string(out), "slot=") != 2 {
		t.Errorf("curl --cacert: got %q, %v; want two answers", out, err)
	}
}

// TestTLSPlainClient: a plain HTTP request on a TLS listener gets no HTTP
// answer: the handshake fails and the child closes.
func TestTLSPlainClient(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	a := startActd(t, nil, "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--accept-filter", "http", "--start-children", "1")
	c, err := net.DialTimeout("unix", a.sock, tlsBound)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(tlsBound))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	b, _ := io.ReadAll(c)
	if strings.Contains(string(b), "HTTP/1.1") {
		t.Errorf("plain request on a TLS listener: got %q, want no HTTP answer", b)
	}
}

// TestTLSReload: `actd reload` re-reads the certificate files: a changed
// certificate is served by the new generation; a broken one fails the
// reload (exit 78, tls-cert named) and the running one serves on.
func TestTLSReload(t *testing.T) {
	dir := t.TempDir()
	first := testcert.Write(t, dir, "server", 1)
	conf := filepath.Join(dir, "actd.conf")
	if err := os.WriteFile(conf, []byte("start-children = 1\ntls-cert = "+first.CertFile+"\ntls-key = "+first.KeyFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startActd(t, nil, "--config", conf)
	if got := servedSerial(t, a, first); got.Cmp(first.Serial) != 0 {
		t.Fatalf("before the reload: served serial %v, want %v", got, first.Serial)
	}
	second := testcert.Write(t, dir, "server", 2) // the same files
	if code, out := runReloadCmd(t, a); code != exitOK {
		t.Fatalf("reload: exit %d, %s", code, out)
	}
	if got := servedSerial(t, a, second); got.Cmp(second.Serial) != 0 {
		t.Errorf("after the reload: served serial %v, want %v", got, second.Serial)
	}
	if err := os.WriteFile(second.CertFile, []byte("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runReloadCmd(t, a)
	if code != exitConfig || !strings.Contains(out, "tls-cert") {
		t.Errorf("reload with a broken certificate: exit %d, %q; want %d naming tls-cert", code, out, exitConfig)
	}
	if got := servedSerial(t, a, second); got.Cmp(second.Serial) != 0 {
		t.Errorf("after the failed reload: served serial %v, want %v still", got, second.Serial)
	}
}

// TestTLSSlowClientHello: under the http filter, with one child, a client
// that sends 3 bytes of its ClientHello and waits pins no child: the
// master holds it (the ClientHello rule), and a good TLS client is served
// meanwhile, while the slow one is still open.
func TestTLSSlowClientHello(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	a := startActd(t, nil, "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--accept-filter", "http",
		"--start-children", "1", "--max-children", "1", "--min-spare", "0", "--max-spare", "1", "--hold-timeout", "5m")
	slow, err := net.DialTimeout("unix", a.sock, tlsBound)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte{22, 3, 1}); err != nil { // a handshake record's first 3 bytes
		t.Fatal(err)
	}
	waitFor(t, "the slow client accepted", tlsBound, func() bool {
		d := a.status(t).Snapshot
		return d.Busy > 0 || d.Held != nil && d.Held.Held > 0
	})
	c := tlsDial(t, a, cert)
	defer c.Close()
	if body := tlsGet(t, c, bufio.NewReader(c), "/"); !strings.HasPrefix(body, "slot=0") {
		t.Errorf("good client: got %q, want slot=0's answer", body)
	}
	slow.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := slow.Read(make([]byte, 1)); !isTimeout(err) {
		t.Errorf("slow client after the good one: got %d bytes, %v; want it still open, waiting", n, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestTLSRefusesOldWorker: a worker without the tls capability (revision
// 1: its hello announces none) is refused at its hello, exit 78 naming
// --tls-cert.
func TestTLSRefusesOldWorker(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 7)
	args := []string{"--listen", "unix:" + filepath.Join(t.TempDir(), "s"), "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile,
		"--", os.Args[0], oldArg}
	checkRefused(t, args, "tls-cert", "no tls capability")
}

// TestTLSBadConfig: a bad certificate setting stops actd at start with
// exit 78 and a line naming the key.
func TestTLSBadConfig(t *testing.T) {
	dir := t.TempDir()
	a := testcert.Write(t, dir, "a", 1)
	b := testcert.Write(t, dir, "b", 2)
	sock := "unix:" + filepath.Join(dir, "s")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"key of another certificate", []string{"--tls-cert", a.CertFile, "--tls-key", b.KeyFile}, "tls-key"},
		{"missing certificate", []string{"--tls-cert", filepath.Join(dir, "none.pem"), "--tls-key", a.KeyFile}, "tls-cert"},
		{"unknown listener", []string{"--tls-cert", "www=" + a.CertFile, "--tls-key", "www=" + a.KeyFile}, "tls-cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, append([]string{"--listen", sock}, tc.args...), fmt.Sprintf("actd: %s:", tc.want))
		})
	}
}

// splitConn writes its first Write in two parts: 3 bytes, then, once
// between returns, the rest.
type splitConn struct {
	net.Conn
	between func()
	done    bool
}

func (c *splitConn) Write(b []byte) (int, error) {
	if c.done || len(b) <= 3 {
		return c.Conn.Write(b)
	}
	c.done = true
	n, err := c.Conn.Write(b[:3])
	if err != nil {
		return n, err
	}
	c.between()
	k, err := c.Conn.Write(b[3:])
	return n + k, err
}

// TestTLSHeldThenServed: under the http filter a ClientHello that comes
// in two parts is held by the master until whole, then handed to a child
// (C), which terminates TLS and serves the request.
func TestTLSHeldThenServed(t *testing.T) {
	cert := testcert.Write(t, t.TempDir(), "server", 9)
	a := startActd(t, nil, "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile, "--accept-filter", "http", "--start-children", "1")
	raw, err := net.DialTimeout("unix", a.sock, tlsBound)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(tlsBound))
	held := false
	split := &splitConn{Conn: raw, between: func() {
		waitFor(t, "the partial ClientHello held", tlsBound, func() bool {
			h := a.status(t).Snapshot.Held
			return h != nil && h.Held > 0
		})
		held = true
	}}
	c := tls.Client(split, &tls.Config{RootCAs: cert.Pool, ServerName: "localhost"})
	defer c.Close()
	if body := tlsGet(t, c, bufio.NewReader(c), "/"); !held || !strings.HasPrefix(body, "slot=") {
		t.Errorf("got %q, held %v; want an answer after the master held the connection", body, held)
	}
}
