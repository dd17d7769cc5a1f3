//go:build integration

package integration

import (
	"crypto/tls"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/internal/testcert"
)

// edgeCredentials is docs/operations.md's drop-in for TLS: systemd hands
// the certificate and key to the service (the unit's hardening kept:
// DynamicUser=, ProtectSystem=strict, PrivateUsers=), under
// /run/credentials/UNIT/.
const edgeCredentials = `LoadCredential=web.pem:/etc/actd/tls/web.pem
LoadCredential=web.key:/etc/actd/tls/web.key
`

// edgeSlowHellos is how many connections start a ClientHello and stop:
// more than the pool's max-children (32 by default).
const edgeSlowHellos = 40

// TestEdgeTLS (issue 24 item 2), through the installed package:
//
//   - credential: a pool as shipped (accept-filter = http) with
//     docs/operations.md's LoadCredential= drop-in serves HTTPS to
//     `curl --cacert`, and the unit keeps its hardening;
//   - slow ClientHello: 40 connections that send the first bytes of a
//     ClientHello and stop (more than max-children) pin no child: the
//     master holds them, a good client is answered, the pool stays small;
//   - reload: a pool whose files the service may read serves a renewed
//     certificate (the same paths) after `systemctl reload`, the master
//     kept.
func TestEdgeTLS(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skipf("skipping: curl needed for the HTTPS client: %v", err)
	}
	a := NewActdBox(t)
	dir := t.TempDir()
	first := testcert.Write(t, dir, "web", 1)
	a.CopyIn(first.CertFile, "/etc/actd/tls/web.pem")
	a.CopyIn(first.KeyFile, "/etc/actd/tls/web.key") // 0600, root's: systemd reads it

	var addr string
	unit := "actd@tls.service"
	t.Run("credential", func(t *testing.T) {
		config := "accept-filter = http\ntls-cert = /run/credentials/actd@tls.service/web.pem\ntls-key = /run/credentials/actd@tls.service/web.key\n"
		addr = a.startEdgePool("tls", config, edgeCredentials)
		out, err := curlHTTPS(first.CertFile, addr, time.Minute) // the first connection starts the service
		if err != nil || !strings.Contains(out, "slot=") {
			t.Fatalf("curl --cacert: %q, %v; want the built-in handler's answer\n%s", out, err, a.Journal(unit))
		}
		show := a.Run("systemctl", "show", unit, "-p", "DynamicUser,ProtectSystem,PrivateUsers,ActiveState")
		for _, want := range []string{"DynamicUser=yes", "ProtectSystem=strict", "PrivateUsers=yes", "ActiveState=active"} {
			if !strings.Contains(show, want) {
				t.Errorf("systemctl show %s: got\n%s\nwant %s", unit, show, want)
			}
		}
	})
	t.Run("slow ClientHello", func(t *testing.T) {
		if addr == "" {
			t.Skip("skipping: the credential pool did not start")
		}
		checkSlowHellos(t, a, unit, addr, first)
	})
	t.Run("reload", func(t *testing.T) {
		checkTLSReload(t, a, dir)
	})
}

// checkSlowHellos opens edgeSlowHellos connections to addr that send the
// first half of a ClientHello, then checks that the master holds them,
// that a good client is answered beside them, that no child serves them
// (the pool stays below max-children) and that they are still open.
func checkSlowHellos(t *testing.T, a *ActdBox, unit, addr string, cert testcert.Cert) {
	hello := clientHello(t)
	var slow []net.Conn
	defer func() {
		for _, c := range slow {
			c.Close()
		}
	}()
	for range edgeSlowHellos {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
		if _, err := c.Write(hello[:len(hello)/2]); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	waitService(t, a.Bus, unit, 15*time.Second, fmt.Sprintf("holding %d connections", edgeSlowHellos), func(s ServiceState) bool {
		if m := heldLine.FindStringSubmatch(s.StatusText); m != nil {
			fmt.Sscan(m[1], &held)
		}
		return held >= edgeSlowHellos
	})
	if out, err := curlHTTPS(cert.CertFile, addr, 30*time.Second); err != nil || !strings.Contains(out, "slot=") {
		t.Errorf("good client beside %d slow ClientHellos: %q, %v; want an answer", edgeSlowHellos, out, err)
	}
	line := a.WaitPoolLine(unit, 5*time.Second, "a pool line", func([]int) bool { return true })
	if line[poolTotal] >= line[poolMax] || line[poolBusy] >= edgeSlowHellos {
		t.Errorf("pool line %v beside %d slow ClientHellos: %d children of max %d, %d busy; want them to pin none",
			line, edgeSlowHellos, line[poolTotal], line[poolMax], line[poolBusy])
	}
	for i, c := range slow {
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if n, err := c.Read(make([]byte, 1)); !isTimeout(err) {
			t.Errorf("slow ClientHello %d: got %d bytes, %v; want it still open, held", i, n, err)
			break
		}
	}
}

// checkTLSReload runs a pool "tlsr" whose certificate and key are files
// in /etc/actd/tlsr that the dynamic user may read, writes a renewed
// certificate (serial 2) over them, runs `systemctl reload` and checks
// that the new certificate is served by the same master.
func checkTLSReload(t *testing.T, a *ActdBox, dir string) {
	first := testcert.Write(t, dir, "tlsr", 1)
	install := func(c testcert.Cert) {
		a.CopyIn(c.CertFile, "/etc/actd/tlsr/web.pem")
		// A test box: the key readable by all, as the pool's dynamic user
		// has no group to share it with; a host would use a group or
		// LoadCredential= (and restart) instead.
		key, err := os.ReadFile(c.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		a.WriteFile("/etc/actd/tlsr/web.key", key, 0o644)
	}
	install(first)
	addr := a.startEdgePool("tlsr", "accept-filter = http\ntls-cert = /etc/actd/tlsr/web.pem\ntls-key = /etc/actd/tlsr/web.key\n", "")
	unit := "actd@tlsr.service"
	if out, err := curlHTTPS(first.CertFile, addr, time.Minute); err != nil {
		t.Fatalf("curl --cacert: %q, %v\n%s", out, err, a.Journal(unit))
	}
	before := serviceState(t, a.Bus, unit)
	second := testcert.Write(t, dir, "tlsr", 2)
	install(second)
	a.Run("systemctl", "reload", unit)
	var got *big.Int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = servedSerial(addr); got != nil && got.Cmp(second.Serial) == 0 {
			break
		}
	}
	if got == nil || got.Cmp(second.Serial) != 0 {
		t.Errorf("after systemctl reload: served serial %v, want %v\n%s", got, second.Serial, a.Journal(unit))
	}
	if out, err := curlHTTPS(second.CertFile, addr, 30*time.Second); err != nil || !strings.Contains(out, "slot=") {
		t.Errorf("curl --cacert with the renewed certificate: %q, %v", out, err)
	}
	if after := serviceState(t, a.Bus, unit); after.MainPID != before.MainPID || after.NRestarts != 0 {
		t.Errorf("master: PID %d (NRestarts %d) after the reload, want %d kept", after.MainPID, after.NRestarts, before.MainPID)
	}
}

// curlHTTPS runs curl on the host against https://addr/ trusting only
// caFile, and returns its output.
func curlHTTPS(caFile, addr string, timeout time.Duration) (string, error) {
	out, err := exec.Command("curl", "-sS", "--max-time", fmt.Sprint(int(timeout.Seconds())), "--cacert", caFile,
		"https://"+addr+"/").CombinedOutput()
	return string(out), err
}

// servedSerial returns the serial of the certificate served at addr, or
// nil if the handshake fails.
func servedSerial(addr string) *big.Int {
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) // the serial is what is checked
	if err != nil {
		return nil
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber
}

// clientHello returns the first TLS record a Go client sends: its
// ClientHello.
func clientHello(t *testing.T) []byte {
	t.Helper()
	client, server := net.Pipe()
	defer server.Close()
	go func() {
		tls.Client(client, &tls.Config{ServerName: "localhost"}).Handshake()
		client.Close()
	}()
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	head := make([]byte, 5)
	if _, err := io.ReadFull(server, head); err != nil {
		t.Fatalf("capture a ClientHello: %v", err)
	}
	rest := make([]byte, int(head[3])<<8|int(head[4]))
	if _, err := io.ReadFull(server, rest); err != nil {
		t.Fatalf("capture a ClientHello: %v", err)
	}
	return append(head, rest...)
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
