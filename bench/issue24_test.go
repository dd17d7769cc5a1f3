package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestIssue24Flags(t *testing.T) {
	tests := []struct {
		server   string
		wantMode string
		want     []string // flags that must be there
		wantNot  []string // flags that must not
		speaks   clientKind
	}{
		{"i24-go", "dispatch", []string{"--accept-filter"}, []string{"--proxy-protocol-from", "--tls-cert"}, speakPlain},
		{"i24-wsgi-proxy", "dispatch", []string{"--accept-filter", "--proxy-protocol-from"}, []string{"--tls-cert"}, speakProxy},
		{"i24-go-tls", "dispatch", []string{"--accept-filter", "--tls-cert", "--tls-key"}, []string{"--proxy-protocol-from"}, speakTLS},
		{"i24-wsgi-tls-exclusive", "exclusive", []string{"--tls-cert", "--tls-key"}, []string{"--accept-filter", "--proxy-protocol-from"}, speakTLS},
		{"i24-gunicorn-tls", "", nil, nil, speakTLS},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			if got := issue24Speaks(tt.server); got != tt.speaks {
				t.Errorf("speaks %v, want %v", got, tt.speaks)
			}
			if tt.wantMode == "" {
				return
			}
			mode, flags := issue24Flags(tt.server, []string{"--accept-filter", "http"},
				[]string{"--accept-filter", "http", "--proxy-protocol-from", "127.0.0.1/32"}, []string{"--tls-cert", "C", "--tls-key", "K"})
			if mode != tt.wantMode {
				t.Errorf("mode %q, want %q", mode, tt.wantMode)
			}
			for _, f := range tt.want {
				if !slices.Contains(flags, f) {
					t.Errorf("flags %q, want %s", flags, f)
				}
			}
			for _, f := range tt.wantNot {
				if slices.Contains(flags, f) {
					t.Errorf("flags %q, want no %s", flags, f)
				}
			}
		})
	}
}

func TestIssue24Options(t *testing.T) {
	o, err := parseOptions([]string{"-issue24", "-quick"})
	if err != nil || !o.issue24 || o.out != "" {
		t.Errorf("-issue24 -quick: got issue24 %v out %q, %v; want true, no output file", o.issue24, o.out, err)
	}
}

// TestIssue24ClientTLS: over TLS every connection is a full handshake
// (none resumed), keep-alive requests share one, and the client trusts
// the run's certificate.
func TestIssue24ClientTLS(t *testing.T) {
	tl := &tools{dir: t.TempDir()}
	if err := writeIssue24Cert(tl); err != nil {
		t.Fatal(err)
	}
	cert, key := issue24CertFiles(tl)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	var handshakes, resumed atomic.Int64
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, VerifyConnection: func(cs tls.ConnectionState) error {
		handshakes.Add(1)
		if cs.DidResume {
			resumed.Add(1)
		}
		return nil
	}}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })}
	go srv.Serve(ln)
	defer srv.Close()

	c := newIssue24Client(speakTLS, tl)
	for _, tt := range []struct {
		keepAlive bool
		check     func(r clientRun, hs int64) bool
	}{
		{false, func(r clientRun, hs int64) bool { return r.requests == r.conns && hs == int64(r.conns) }},
		{true, func(r clientRun, hs int64) bool { return hs == 2 && r.conns == 2 && r.requests > r.conns }},
	} {
		handshakes.Store(0)
		r := c.run(context.Background(), ln.Addr().String(), 2, tt.keepAlive, 300*time.Millisecond)
		if r.failed > 0 || r.requests == 0 || !tt.check(r, handshakes.Load()) || resumed.Load() > 0 {
			t.Errorf("keep-alive %v: got %d requests on %d connections, %d failed (%v), %d handshakes of which %d resumed",
				tt.keepAlive, r.requests, r.conns, r.failed, r.firstErr, handshakes.Load(), resumed.Load())
		}
	}
}

// TestIssue24ClientProxy: every connection starts with the v1 header,
// then the request.
func TestIssue24ClientProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lines := make(chan string, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(conn)
			first, _ := r.ReadString('\n')
			second, _ := r.ReadString('\n')
			lines <- first + second
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
			conn.Close()
		}
	}()
	if err := newIssue24Client(speakProxy, nil).once(ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if got := <-lines; !strings.HasPrefix(got, issue24Header+"GET / HTTP/1.1\r\n") {
		t.Errorf("got %q, want the v1 header, then the request", got)
	}
}
