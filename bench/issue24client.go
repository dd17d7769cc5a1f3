package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// clientKind is how issue 24's load client talks to a server.
type clientKind int

const (
	speakPlain clientKind = iota // HTTP/1.1
	speakProxy                   // a PROXY v1 header, then HTTP/1.1
	speakTLS                     // HTTPS: a full handshake on every connection
)

// issue24Header is the PROXY v1 header the client sends: a client
// address as an L4 balancer would give it.
const issue24Header = "PROXY TCP4 203.0.113.7 127.0.0.1 5555 80\r\n"

// issue24IOBound bounds each connect, handshake and answer.
const issue24IOBound = 10 * time.Second

// The requests: one per connection, or kept alive.
const (
	closeRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
	keepRequest  = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
)

// issue24Client is issue 24's load client: Go's net and crypto/tls, on
// loopback, every connection and request bounded in time.
type issue24Client struct {
	kind clientKind
	tls  *tls.Config // for speakTLS
}

// newIssue24Client returns a client that speaks kind. Over TLS it trusts
// only the run's certificate (issue24CertFiles), offers X25519 then P-256
// (what OpenSSL 3.0 and Go agree on; Go's default would add ML-KEM, which
// only actd's Go children take; uWSGI sets P-256 alone, and answers the
// X25519 key share with a HelloRetryRequest) and keeps no session: every
// connection is a full handshake.
func newIssue24Client(kind clientKind, t *tools) issue24Client {
	c := issue24Client{kind: kind}
	if kind == speakTLS {
		pool := x509.NewCertPool()
		cert, _ := issue24CertFiles(t)
		if pem, err := os.ReadFile(cert); err == nil {
			pool.AppendCertsFromPEM(pem)
		}
		c.tls = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12,
			CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256}, SessionTicketsDisabled: true, NextProtos: []string{"http/1.1"}}
	}
	return c
}

// once sends one request on a new connection. It returns nil if it was
// answered with status 200.
func (c issue24Client) once(address string) error {
	_, err := c.session(address, false, time.Now())
	return err
}

// session opens one connection to address (a header first, or a
// handshake) and sends one request with Connection: close, or with
// keepAlive requests until the server closes or until passes. It returns
// how many were answered with status 200, and the first failure.
func (c issue24Client) session(address string, keepAlive bool, until time.Time) (int, error) {
	raw, err := net.DialTimeout("tcp", address, issue24IOBound)
	if err != nil {
		return 0, err
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(issue24IOBound))
	conn, first := raw, ""
	switch c.kind {
	case speakProxy:
		first = issue24Header
	case speakTLS:
		tc := tls.Client(raw, c.tls)
		if err := tc.Handshake(); err != nil {
			return 0, fmt.Errorf("handshake: %w", err)
		}
		conn = tc
	}
	req := closeRequest
	if keepAlive {
		req = keepRequest
	}
	r := bufio.NewReader(conn)
	for n := 0; ; n++ {
		_, err := io.WriteString(conn, first+req)
		first = ""
		closed := false
		if err == nil {
			closed, err = readAnswer(r)
		}
		if err != nil && n > 0 && closedBetween(err) {
			return n, nil // the server closed a kept connection without saying so
		}
		if err != nil {
			return n, err
		}
		if !keepAlive || closed || time.Now().After(until) {
			return n + 1, nil
		}
		raw.SetDeadline(time.Now().Add(issue24IOBound))
	}
}

// closedBetween reports whether err says that the server closed the
// connection: on a kept connection, between two requests.
func closedBetween(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// readAnswer reads one response from r, body included. It returns
// whether the server closes the connection after it, or an error if the
// status is not 200 or the response does not parse.
func readAnswer(r *bufio.Reader) (bool, error) {
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return true, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %s", resp.Status)
	}
	return resp.Close, err
}

// clientRun is what a client loop did over one run.
type clientRun struct {
	requests int           // answered with status 200
	conns    int           // connections opened (over TLS: full handshakes)
	failed   int           // connections that ended in an error
	firstErr error         // the first of those errors
	elapsed  time.Duration // the run's length
}

// rate is requests per second.
func (r clientRun) rate() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// connRate is connections (handshakes) per second.
func (r clientRun) connRate() float64 { return float64(r.conns) / r.elapsed.Seconds() }

// run drives conns connections in a closed loop against address for d
// (or until ctx ends): each opens a connection, makes its session and
// opens the next. It returns the counts.
func (c issue24Client) run(ctx context.Context, address string, conns int, keepAlive bool, d time.Duration) clientRun {
	var mu sync.Mutex
	var out clientRun
	var wg sync.WaitGroup
	start := time.Now()
	until := start.Add(d)
	for range conns {
		wg.Go(func() {
			var mine clientRun
			for ctx.Err() == nil && time.Now().Before(until) {
				n, err := c.session(address, keepAlive, until)
				mine.requests, mine.conns = mine.requests+n, mine.conns+1
				if err != nil {
					mine.failed++
					if mine.firstErr == nil {
						mine.firstErr = err
					}
				}
			}
			mu.Lock()
			out.requests, out.conns, out.failed = out.requests+mine.requests, out.conns+mine.conns, out.failed+mine.failed
			if out.firstErr == nil {
				out.firstErr = mine.firstErr
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	return out
}
