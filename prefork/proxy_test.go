package prefork_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork"
	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/proxyproto"
	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// serveProxyFirst runs the proxyfirst test worker: a KeepFDHandler that
// answers each HTTP/1.1 request head with "slot=K client=ADDR\n"
// (worker.RemoteAddr) and gives the connection back after each answer.
// It hides the filter from the library (ACTD_ACCEPT_FILTER), which then
// announces handoff and proxy but not screen: the master accepts, reads
// the headers and hands connections over, master first.
func serveProxyFirst() error {
	os.Unsetenv(protocol.EnvFilter)
	id := "slot=" + os.Getenv(protocol.EnvSlot)
	return worker.ServeKeepFD(context.Background(), func(fd int, parkable bool) bool {
		r := bufio.NewReader(fdReader(fd))
		for line := ""; line != "\r\n"; {
			var err error
			if line, err = r.ReadString('\n'); err != nil {
				return false
			}
		}
		body := id + " client=" + worker.RemoteAddr(fd).String() + "\n"
		head := "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		if _, err := unix.Write(fd, []byte(head+body)); err != nil {
			return false
		}
		return parkable && r.Buffered() == 0
	})
}

// TestProxyMasterFirst: under a filter with children that take only what
// the master hands over, the master reads the PROXY header of each
// connection it accepts (whole, or in parts, before the request or with
// it) and sends the client's address with the Conn; a keep-alive
// connection given back keeps it for its next request; a malformed
// header closes the connection, counted.
func TestProxyMasterFirst(t *testing.T) {
	cfg := fastConfig(protocol.Dispatch)
	cfg.Filter = acceptfilter.HTTP
	cfg.ProxyFrom = []proxyproto.Rule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}}
	p := startPool(t, cfg, "proxyfirst")
	const header, req = "PROXY TCP6 2001:db8::7 2001:db8::1 443 80\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	for _, tc := range []struct {
		name  string
		parts []string
		want  int // answers naming the client
	}{
		{"at once", []string{header + req}, 1},
		{"header, then the request", []string{header, "", req}, 1},
		{"header in parts", []string{header[:7], "", header[7:30], "", header[30:] + req}, 1},
		{"keep-alive", []string{header + req, "", req, "", req}, 3},
		{"malformed", []string{"PROXY TCP6 nowhere\r\n" + req}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := proxyTalk(t, p.addr, tc.parts)
			if len(got) != tc.want {
				t.Fatalf("got answers %q, want %d", got, tc.want)
			}
			for _, a := range got {
				if !strings.HasSuffix(a, " client=[2001:db8::7]:443") {
					t.Errorf("got %q, want the client from the header", a)
				}
			}
		})
	}
	h := snapshot(t, p).Held
	if h == nil || h.ProxyHeaders != 4 || h.ProxyFailed != 1 {
		t.Errorf("held info %+v: want 4 headers read by the master (one per good connection), 1 failed", h)
	}
	if s := snapshot(t, p).Stats; s.Parked < 2 {
		t.Errorf("parked %d, want at least 2", s.Parked)
	}
}

// proxyTalk sends parts on one connection ("": a 200 ms wait) and returns
// the bodies of the answers to the requests among them.
func proxyTalk(t *testing.T, addr string, parts []string) []string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second)) // a bound, not a speed
	r := bufio.NewReader(c)
	var bodies []string
	for _, part := range parts {
		if part == "" {
			time.Sleep(200 * time.Millisecond) // a client that pauses: the thing tested
			continue
		}
		if _, err := c.Write([]byte(part)); err != nil {
			return bodies
		}
		if !strings.HasSuffix(part, "\r\n\r\n") {
			continue
		}
		var body string
		for line := ""; line != "\r\n"; {
			if line, err = r.ReadString('\n'); err != nil {
				return bodies
			}
		}
		if body, err = r.ReadString('\n'); err != nil {
			return bodies
		}
		bodies = append(bodies, strings.TrimSpace(body))
	}
	return bodies
}

// TestProxyUnknownName: a --proxy-protocol-from NAME= that no listener has
// (systemd's names are known at New only) is a *FieldError naming the
// flag, at New and at Reload.
func TestProxyUnknownName(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fd := dupListener(t, ln)
	ln.Close()
	cfg := fastConfig(protocol.Exclusive)
	cfg.ProxyFrom = []proxyproto.Rule{{Name: "api", Prefix: netip.MustParsePrefix("10.0.0.0/8")}}
	_, err = prefork.New(cfg, []prefork.Listener{{Name: "test", FD: fd}}, nil)
	var fe *prefork.FieldError
	if !errors.As(err, &fe) || fe.Field != "proxy-protocol-from" || !strings.Contains(err.Error(), `no listening socket is named "api"`) {
		t.Errorf("New: got %v, want a *FieldError for proxy-protocol-from naming api", err)
	}
	unix.Close(fd)
	p := startPool(t, fastConfig(protocol.Exclusive), "echo")
	if _, err := p.reload(cfg); !errors.As(err, &fe) || fe.Field != "proxy-protocol-from" {
		t.Errorf("Reload: got %v, want a *FieldError for proxy-protocol-from", err)
	}
}

// TestProxyMapped: on a dual-stack IPv6 socket (systemd's default for
// [::]:PORT) an IPv4 client's peer is IPv4-mapped (::ffff:127.0.0.1),
// which an IPv4 network trusts: in the master (master first, under the
// filter) and in a child that accepts itself (exclusive).
func TestProxyMapped(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   protocol.Mode
		filter acceptfilter.Filter
	}{
		{"master first", protocol.Dispatch, acceptfilter.HTTP},
		{"exclusive", protocol.Exclusive, acceptfilter.None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "[::]:0")
			if err != nil {
				t.Skipf("no IPv6 socket: %v", err)
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
			if c, err := net.Dial("tcp4", addr); err != nil {
				ln.Close()
				t.Skipf("the IPv6 socket is not dual-stack (net.ipv6.bindv6only): %v", err)
			} else {
				c.Close()
			}
			fd := dupListener(t, ln)
			ln.Close()
			cfg := fastConfig(tc.mode)
			cfg.Filter = tc.filter
			cfg.ProxyFrom = []proxyproto.Rule{{Prefix: netip.MustParsePrefix("127.0.0.1/32")}}
			p := startPoolOn(t, cfg, "proxyfirst", fd, addr)
			got := proxyTalk(t, p.addr, []string{"PROXY TCP4 203.0.113.7 192.0.2.1 5555 80\r\nGET / HTTP/1.1\r\n\r\n"})
			if len(got) != 1 || !strings.HasSuffix(got[0], " client=203.0.113.7:5555") {
				t.Errorf("got %q, want the client from the header", got)
			}
		})
	}
}
