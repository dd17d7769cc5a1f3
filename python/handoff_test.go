package python_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// filterFlags run a pool of 2 children under the http accept filter: the
// children accept and screen (revision 4), the master holds what is not
// ready and hands it over (C) once it is.
var filterFlags = []string{"--accept-filter", "http", "--max-children", "2", "--start-children", "2",
	"--hold-timeout", "60s"}

// TestAcceptFilter runs the adapter under --accept-filter http, where a
// worker must announce handoff (else actd exits 78 at its hello): every
// request kind is answered, a keep-alive connection that idles goes back to
// the master (K) and its next request is answered, and slow or silent
// clients held by the master do not stop a good client. TestChildrenFirst
// checks which path each connection takes.
func TestAcceptFilter(t *testing.T) {
	py := python(t)
	p := startPool(t, "dispatch", []string{py, "-m", "actd.wsgi", "validated:app"}, filterFlags...)
	checkRequestKinds(t, p.addr)
	t.Run("idle keep-alive given back", func(t *testing.T) { checkGivenBack(t, p) })
	t.Run("slow and silent clients", func(t *testing.T) { checkSlowClients(t, p) })
	t.Run("concurrent", func(t *testing.T) { checkConcurrent(t, p) })
	if s, err := p.Held(); err != nil || s.Pool.Stats.Handoffs == 0 || s.Pool.Stats.Garbage != 0 {
		t.Errorf("stats: got %+v, %v; want handoffs, no garbage", s.Pool.Stats, err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// checkGivenBack: a keep-alive client that stops after a response is
// parked in the master (no child holds it: both are idle), and the next
// request on the same connection is answered.
func checkGivenBack(t *testing.T, p *pool) {
	before, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := dial(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for i := range 3 {
		if err := roundTrip(conn, r, fmt.Sprintf("/echo?%d", i)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		_, err := p.WaitHeld(func(d statusDoc) bool {
			return d.Pool.Held.Parked == 1 && d.Pool.Stats.Parked >= before.Pool.Stats.Parked+uint64(i+1)
		})
		if err != nil {
			t.Fatalf("after request %d: want the connection parked: %v", i, err)
		}
		if _, err := p.WaitStatus(func(d statusDoc) bool { return d.Pool.Idle == 2 }); err != nil {
			t.Errorf("after request %d: want both children idle: %v", i, err)
		}
	}
}

// roundTrip sends GET target on conn, kept alive, and checks the answer.
func roundTrip(conn net.Conn, r *bufio.Reader, target string) error {
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target); err != nil {
		return err
	}
	resp, err := http.ReadResponse(r, &http.Request{Method: "GET"})
	if err != nil {
		return err
	}
	var body [256]byte
	n, _ := resp.Body.Read(body[:])
	resp.Body.Close()
	want := "GET /echo " + target[len("/echo?"):] + " "
	if resp.StatusCode != 200 || string(body[:n]) != want || resp.Close {
		return fmt.Errorf("got %d %q (close %v), want 200 %q kept alive", resp.StatusCode, body[:n], resp.Close, want)
	}
	return nil
}

// checkSlowClients opens 50 connections that send part of a request head
// and stop, and 20 that send nothing, against 2 children: the master holds
// them all, and a good client's 50 requests are all answered.
func checkSlowClients(t *testing.T, p *pool) {
	const slow, silent, good = 50, 20, 50
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := range slow + silent {
		c, err := dial(p.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		idle = append(idle, c)
		if i < slow {
			fmt.Fprintf(c, "GET /echo?slow%d HTTP/1.1\r\nHost: x\r\n", i)
		}
	}
	if _, err := p.WaitHeld(func(d statusDoc) bool { return d.Pool.Held.Held >= slow+silent }); err != nil {
		t.Fatalf("want %d connections held: %v", slow+silent, err)
	}
	for i := range good {
		got, err := exchange(p.addr, fmt.Sprintf("GET /echo?%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", i))
		if err != nil {
			t.Fatalf("good request %d: %v", i, err)
		}
		checkBodies(t, got, []string{fmt.Sprintf("GET /echo %d ", i)})
	}
	if s, err := p.Held(); err != nil || s.Pool.Held.Held < slow+silent {
		t.Errorf("after the good client: got %+v, %v; want the %d slow and silent still held", s.Pool.Held, err, slow+silent)
	}
}
