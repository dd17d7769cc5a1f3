//go:build integration

package integration

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// edgeApp is the WSGI application of TestEdgeProxyProtocol: it answers
// with the client's address as the adapter sets it.
const edgeApp = `def app(environ, start_response):
    body = ("addr=%s port=%s\n" % (environ["REMOTE_ADDR"], environ.get("REMOTE_PORT", "-"))).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
`

// edgeRequest is the request every edge client sends.
const edgeRequest = "GET / HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n"

// TestEdgeProxyProtocol (issue 24 item 1): pools set up as an operator
// would behind an L4 balancer on this host (the shipped accept-filter =
// http, `proxy-protocol-from = 127.0.0.1/32`), one with the built-in
// handler and one with a WSGI application under python3-actd. A PROXY v1
// header, a v2 one with an IPv6 client and a v1 header that comes apart
// from its request (the master holds the connection in between) each give
// the client's address: the built-in handler's client=, the application's
// REMOTE_ADDR and REMOTE_PORT. A trusted peer's request without a header
// is closed without an answer.
func TestEdgeProxyProtocol(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import wsgiref").Run(); err != nil {
		t.Skipf("skipping: Debian's python3 needed for the WSGI application: %v", err)
	}
	a := NewActdBox(t)
	a.InstallPackage(pythonPackage)
	a.WriteFile("/srv/edge/app.py", []byte(edgeApp), 0o644)
	a.Run("chmod", "0755", "/srv/edge")

	pools := []struct {
		pool, worker string
		want         func(ap netip.AddrPort) string // what the answer holds for a client
	}{
		{"px", "", func(ap netip.AddrPort) string { return "client=" + ap.String() }},
		{"pyx", "worker = /usr/bin/python3 -m actd.wsgi --chdir /srv/edge app:app\n",
			func(ap netip.AddrPort) string { return fmt.Sprintf("addr=%s port=%d", ap.Addr(), ap.Port()) }},
	}
	v4, v6 := netip.MustParseAddrPort("203.0.113.7:5555"), netip.MustParseAddrPort("[2001:db8::7]:443")
	for _, p := range pools {
		t.Run(p.pool, func(t *testing.T) {
			addr := a.startEdgePool(p.pool, "accept-filter = http\nproxy-protocol-from = 127.0.0.1/32\n"+p.worker, "")
			unit := "actd@" + p.pool + ".service"
			// The first connection starts the service: it carries a header too.
			if _, err := proxyGet(addr, time.Minute, proxyV1Header(v4)+edgeRequest); err != nil {
				t.Fatalf("first request: %v\n%s", err, a.Journal(unit))
			}
			for _, tc := range []struct {
				name   string
				client netip.AddrPort
				parts  []string
			}{
				{"v1", v4, []string{proxyV1Header(v4) + edgeRequest}},
				{"v2 IPv6", v6, []string{proxyV2Header(v6) + edgeRequest}},
				{"v1, a pause, the request", v4, []string{proxyV1Header(v4), edgeRequest}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					body, err := proxyGet(addr, 30*time.Second, tc.parts...)
					if want := p.want(tc.client); err != nil || !strings.Contains(body, want) {
						t.Errorf("got %q, %v; want 200 with %q\n%s", body, err, want, a.Journal(unit))
					}
				})
			}
			t.Run("no header", func(t *testing.T) {
				if body, err := proxyGet(addr, 30*time.Second, edgeRequest); err == nil {
					t.Errorf("a trusted peer without a header: got %q, want the connection closed without an answer", body)
				}
			})
		})
	}
}

// startEdgePool writes pool's config and a socket drop-in on a free port
// of 127.0.0.1, and service as a service drop-in when not empty, starts
// the pool's socket and returns its address. The service starts with the
// first connection.
func (a *ActdBox) startEdgePool(pool, config, service string) string {
	a.t.Helper()
	a.WriteFile("/etc/actd/"+pool+".conf", []byte(config), 0o644)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(a.t))
	a.WriteFile("/etc/systemd/system/actd@"+pool+".socket.d/listen.conf", []byte("[Socket]\nListenStream="+addr+"\n"), 0o644)
	if service != "" {
		a.WriteFile("/etc/systemd/system/actd@"+pool+".service.d/edge.conf", []byte("[Service]\n"+service), 0o644)
	}
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "start", "actd@"+pool+".socket")
	return addr
}

// proxyGet connects to addr, sends parts with 300 ms between them and
// reads one HTTP answer within timeout. It returns "STATUS BODY", or an
// error if the connection closed without an answer or the status is not
// 200.
func proxyGet(addr string, timeout time.Duration, parts ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	for i, p := range parts {
		if i > 0 {
			time.Sleep(300 * time.Millisecond) // parts apart, the thing tested
		}
		if _, err := io.WriteString(c, p); err != nil {
			return "", fmt.Errorf("send part %d: %w", i+1, err)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", fmt.Errorf("read the answer: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	text := resp.Status + " " + strings.TrimSpace(string(b))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %s", resp.Status)
	}
	return text, err
}

// proxyV1Header is a PROXY v1 header from client to 192.0.2.1:80.
func proxyV1Header(client netip.AddrPort) string {
	return fmt.Sprintf("PROXY TCP4 %s 192.0.2.1 %d 80\r\n", client.Addr(), client.Port())
}

// proxyV2Header is a PROXY v2 header (command PROXY, TCP over IPv6) from
// client to [2001:db8::1]:80, with one TLV (skipped by the reader).
func proxyV2Header(client netip.AddrPort) string {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x21\x00\x00")
	body := append(client.Addr().AsSlice(), netip.MustParseAddr("2001:db8::1").AsSlice()...)
	body = binary.BigEndian.AppendUint16(body, client.Port())
	body = binary.BigEndian.AppendUint16(body, 80)
	body = append(body, 0x04, 0, 2, 'x', 'y')
	binary.BigEndian.PutUint16(b[14:], uint16(len(body)))
	return string(append(b, body...))
}
