package perl_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key,
// PEM, into one file (as actd's memfd holds them) and returns its path
// and a pool that trusts it.
func writeCert(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "actd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})...)
	path := filepath.Join(t.TempDir(), "tls.pem")
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return path, roots
}

// TestTLS runs the handler under a real actd with ACTD_TLS naming a file
// with a certificate and key at fd 9 for listener 0 (docs/perl.md, "TLS";
// set in the worker's command, as a revision-6 master sets it with a
// memfd), without a filter and under --accept-filter http: a TLS 1.2 or
// 1.3 client gets ALPN http/1.1 and https answers, two on one connection;
// a TLS 1.1 client and a plain HTTP client are refused.
func TestTLS(t *testing.T) {
	if err := exec.Command("perl", "-MIO::Socket::SSL", "-e1").Run(); err != nil {
		t.Skipf("IO::Socket::SSL needed (Debian package libio-socket-ssl-perl): %v", err)
	}
	file, roots := writeCert(t)
	prefix := []string{"sh", "-c", `exec 9<"$0"; ACTD_TLS=0=9 exec "$@"`, file}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"dispatch", nil},
		{"dispatch, accept filter http", []string{"--accept-filter", "http", "--hold-timeout", "60s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags := append([]string{"--start-children", "2", "--min-children", "2", "--max-children", "2"}, tc.flags...)
			p := startPoolWith(t, prefix, "dispatch", "app.psgi", flags...)
			for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				conf := &tls.Config{RootCAs: roots, MinVersion: version, MaxVersion: version, NextProtos: []string{"h2", "http/1.1"}}
				conn, err := tls.DialWithDialer(&net.Dialer{Timeout: ioBound}, "tcp", p.addr, conf)
				if err != nil {
					t.Fatalf("TLS %x: %v", version, err)
				}
				conn.SetDeadline(time.Now().Add(ioBound))
				if st := conn.ConnectionState(); st.NegotiatedProtocol != "http/1.1" || st.Version != version {
					t.Errorf("got ALPN %q, version %x; want http/1.1, %x", st.NegotiatedProtocol, st.Version, version)
				}
				r := bufio.NewReader(conn)
				for i := range 2 {
					fmt.Fprint(conn, "GET /client HTTP/1.1\r\nHost: x\r\n\r\n")
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						t.Fatalf("TLS %x, request %d: %v", version, i+1, err)
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if want := "127.0.0.1 "; resp.StatusCode != 200 || len(body) < len(want) || string(body[len(body)-6:]) != "https\n" {
						t.Errorf("TLS %x, request %d: got %s %q, want 200 ending in https", version, i+1, resp.Status, body)
					}
				}
				conn.Close()
			}
			old := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11}
			if conn, err := tls.DialWithDialer(&net.Dialer{Timeout: ioBound}, "tcp", p.addr, old); err == nil {
				conn.Close()
				t.Errorf("TLS 1.1: handshake done, want it refused")
			}
			plain, err := net.DialTimeout("tcp", p.addr, ioBound)
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			plain.SetDeadline(time.Now().Add(ioBound))
			fmt.Fprint(plain, "GET /client HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, err := http.ReadResponse(bufio.NewReader(plain), nil); err == nil {
				t.Errorf("plain HTTP on the TLS listener: got %s, want no answer", resp.Status)
			}
		})
	}
}
