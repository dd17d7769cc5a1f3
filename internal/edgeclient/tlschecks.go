package edgeclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The HTTPS checks a worker kind passes with --tls-cert.

// CheckTLSKeepAlive: three requests on one TLS connection to addr are
// answered over https by one process (the same pid).
func CheckTLSKeepAlive(t *testing.T, addr string, roots *x509.CertPool) {
	t.Helper()
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.StartTLS(roots); err != nil {
		t.Fatal(err)
	}
	bodies, err := c.Talk(Request, Pause, Request, Request)
	if err != nil || len(bodies) != 3 {
		t.Fatalf("got %q, %v; want 3 answers", bodies, err)
	}
	for _, b := range bodies {
		if !strings.HasPrefix(b, "200 OK 127.0.0.1 ") || !hasScheme(b, "https") || pid(b) != pid(bodies[0]) {
			t.Errorf("got %q, want 200 https from 127.0.0.1, all from %s", bodies, pid(bodies[0]))
		}
	}
}

// pid returns what follows "pid=" in an answer, or the whole answer.
func pid(body string) string {
	if _, p, ok := strings.Cut(body, "pid="); ok {
		return p
	}
	return body
}

// CheckCurl: curl --cacert caFile fetches https://localhost:PORT/client
// from addr twice (on one connection) and both answers are https. It
// skips without curl.
func CheckCurl(t *testing.T, addr, caFile string) {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed (Debian package curl)")
	}
	_, port, _ := net.SplitHostPort(addr)
	url := "https://localhost:" + port + "/client"
	out, err := exec.Command(curl, "-sS", "--max-time", "30", "--cacert", caFile,
		"--resolve", "localhost:"+port+":127.0.0.1", url, url).CombinedOutput()
	if err != nil || strings.Count(string(out), " https") != 2 || strings.Contains(string(out), " http ") {
		t.Errorf("curl --cacert: got %q, %v; want two https answers", out, err)
	}
}

// CheckSlowClientHello: a client that sends header (a PROXY header, or
// "") and 3 bytes of a ClientHello to addr and waits pins no child: once
// held says the master holds it, a good TLS client (with the same header)
// is served, and the slow one is still open.
func CheckSlowClientHello(t *testing.T, addr, header string, roots *x509.CertPool, held func() error) {
	t.Helper()
	slow, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Raw.Write(append([]byte(header), 22, 3, 1)); err != nil {
		t.Fatal(err)
	}
	if err := held(); err != nil {
		t.Fatalf("the slow client held by the master: %v", err)
	}
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Talk(header); err != nil {
		t.Fatal(err)
	}
	if err := c.StartTLS(roots); err != nil {
		t.Fatal(err)
	}
	if bodies, err := c.Talk(Request); err != nil || len(bodies) != 1 || !hasScheme(bodies[0], "https") {
		t.Errorf("good client: got %q, %v; want one https answer", bodies, err)
	}
	slow.Raw.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := slow.Raw.Read(make([]byte, 1)); !isTimeout(err) {
		t.Errorf("slow client after the good one: got %d bytes, %v; want it still open, waiting", n, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// hasScheme reports whether an answer names scheme as a word of its own.
func hasScheme(body, scheme string) bool {
	return strings.HasSuffix(body, " "+scheme) || strings.Contains(body, " "+scheme+" ")
}

// ServedSerial returns the serial of the certificate a new TLS connection
// to addr is served with (not verified: a test that changes certificates
// asks which one it got), after one request on it; or an error.
func ServedSerial(addr string) (string, error) {
	c, err := Dial(addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	tc := tls.Client(c.Raw, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		return "", fmt.Errorf("TLS handshake: %w", err)
	}
	return tc.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

// CheckReloadedCert: addr serves the certificate of serial first; after
// change (which writes a certificate of serial second to the same files)
// and reload (SIGHUP to the master), new connections get the second, within
// Bound.
func CheckReloadedCert(t *testing.T, addr, first, second string, change, reload func() error) {
	t.Helper()
	if got, err := ServedSerial(addr); err != nil || got != first {
		t.Fatalf("before the reload: got serial %s, %v; want %s", got, err, first)
	}
	if err := change(); err != nil {
		t.Fatal(err)
	}
	if err := reload(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(Bound)
	for {
		got, err := ServedSerial(addr)
		if err == nil && got == second {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the reload: got serial %s, %v; want %s", got, err, second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
