package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
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

func TestIssue24Order(t *testing.T) {
	cells := issue24Cells()
	name := func(order []int) []string {
		var out []string
		for _, i := range order {
			out = append(out, cells[i].server+"/"+cells[i].load)
		}
		return out
	}
	pairs := []string{"i24-go/close-8", "i24-go-proxy/close-8", "i24-wsgi/close-8", "i24-wsgi-proxy/close-8"}
	swapped := []string{"i24-go-proxy/close-8", "i24-go/close-8", "i24-wsgi-proxy/close-8", "i24-wsgi/close-8"}
	timing := issue24Timing{rounds: 2, pairRounds: 3}
	others := len(cells) - len(pairs)
	tests := []struct {
		round     int
		wantFirst []string // the order's start
		wantLen   int
	}{
		{0, pairs, len(pairs) + others},
		{1, swapped, len(pairs) + others}, // the header first in odd rounds
		{2, pairs, len(pairs)},            // past the other cells' rounds
		{3, nil, 0},                       // past every round
	}
	for _, tt := range tests {
		got := name(issue24Order(cells, tt.round, timing))
		if len(got) != tt.wantLen || !slices.Equal(got[:min(len(got), len(tt.wantFirst))], tt.wantFirst) {
			t.Errorf("round %d: got %v, want %d cells starting %v", tt.round, got, tt.wantLen, tt.wantFirst)
		}
		if slices.Contains(got[min(len(got), len(pairs)):], "i24-go/close-8") {
			t.Errorf("round %d: got a pair's cell among the others: %v", tt.round, got)
		}
	}
	if got := name(issue24Order(cells, 0, issue24Full)); !slices.Contains(got, "i24-go/keepalive-8") || !slices.Contains(got, "i24-gunicorn-tls/close-8") {
		t.Errorf("full timing, round 1: got %v, want the keep-alive and TLS cells too", got)
	}
}

// TestIssue24Target: the PROXY target is judged by server CPU per
// request in the runs of a pair's pools together, not by requests/s
// (taken from the runs alone): here requests/s drop by a fifth with the
// header while CPU per request rises 2% (met), and for WSGI requests/s
// rise while CPU per request rises 10% (missed). The runs alone say the
// opposite of CPU per request, which must not count.
func TestIssue24Target(t *testing.T) {
	ms := time.Millisecond
	alone := func(cpu time.Duration, requests int) []issue24Run {
		return []issue24Run{run24(0, cpu, requests), run24(1, cpu, requests)}
	}
	cells := []issue24Cell{
		{server: "i24-go", load: "close-8", runs: alone(400*ms, 10000), together: alone(250*ms, 5000)},
		{server: "i24-go-proxy", load: "close-8", runs: alone(400*ms, 8000), together: alone(204*ms, 4000)},
		{server: "i24-wsgi", load: "close-8", runs: alone(900*ms, 8000), together: alone(400*ms, 4000)},
		{server: "i24-wsgi-proxy", load: "close-8", runs: alone(900*ms, 10000), together: alone(550*ms, 5000)},
	}
	r := issue24Report{cells: cells, timing: issue24Full, cpuFrom: "each server's own cgroup"}
	tests := []struct {
		kind int
		want []string
	}{
		{0, []string{"PROXY protocol costs under 5% of server CPU per request, close-8, actd built-in, default", "+2.0% (paired median of 2 rounds; 51.0 vs 50.0 µs); requests/s 0.80×", "yes"}},
		{1, []string{"PROXY protocol costs under 5% of server CPU per request, close-8, actd WSGI, default", "+10.0% (paired median of 2 rounds; 110.0 vs 100.0 µs); requests/s 1.25×", "**no**"}},
	}
	for _, tt := range tests {
		if got := r.proxyTarget(tt.kind); !slices.Equal(got, tt.want) {
			t.Errorf("kind %d: got %q, want %q", tt.kind, got, tt.want)
		}
	}
	text := r.markdown()
	for _, want := range []string{
		"| actd built-in | 5000 | 4000 | 0.80× | 50.0 | 51.0 | 1.02× (pairs 1.02–1.02) | +2.0% |",
		"judged by server CPU per request",
		"11 rounds; in each, the two pools of a pair run back to back",
		"then both at once, each loaded by its own client of 8 connections",
		"read before and after the run from each server's own cgroup.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown: no %q in\n%s", want, text)
		}
	}
	if got := (issue24Report{}).proxyTarget(0); got[1] != "not measured" {
		t.Errorf("no runs: got %q, want not measured", got)
	}
}

// TestIssue24Doc keeps docs/benchmarks.md true to the suite: issue 24's
// markers are there once each, in order, so -issue24 rewrites its section
// in place; the commands it shows parse; its prose gives the rounds of a
// full run and says how the PROXY target is judged.
func TestIssue24Doc(t *testing.T) {
	doc := issueDoc(t, "24", issue24Begin, issue24End, "-issue24 ", "-issue24 -quick ")
	prose := doc[strings.Index(doc, "### Issue 24 only"):]
	prose = prose[:strings.Index(prose, "\n### ")]
	prose = strings.Join(strings.Fields(prose), " ")
	for _, want := range []string{
		fmt.Sprintf("%d rounds", issue24Full.pairRounds),
		fmt.Sprintf("%v s of warm-up and a %v s run", issue24Full.pairWarmup.Seconds(), issue24Full.pairRun.Seconds()),
		fmt.Sprintf("both pools at once for %v s of warm-up and a %v s run", issue24Full.pairWarmup.Seconds(), issue24Full.togetherRun.Seconds()),
		"cgroup",
		fmt.Sprintf("%d interleaved rounds", issue24Full.rounds),
		fmt.Sprintf("%v s of warm-up and a %v s run", issue24Full.warmup.Seconds(), issue24Full.run.Seconds()),
		"CPU per request",
	} {
		if !strings.Contains(prose, want) {
			t.Errorf("docs/benchmarks.md, Issue 24 only: got no %q, want the suite's timing and judgement", want)
		}
	}
}
