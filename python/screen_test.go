package python_test

import (
	"fmt"
	"net"
	"testing"
)

// TestChildrenFirst runs the adapter under --accept-filter http with a
// master of protocol revision 4, where it announces screen: the children
// accept by themselves and give the master only what is not ready.
// Requests sent at once are served with no handoff (C) at all; a client
// that connects and waits before it sends is held by the master and handed
// over; silent connections are held, not left in a child.
func TestChildrenFirst(t *testing.T) {
	py := python(t)
	p := startPool(t, "dispatch", []string{py, "-m", "actd.wsgi", "validated:app"}, filterFlags...)
	t.Run("ready: no handoff", func(t *testing.T) { checkNoHandoff(t, p) })
	t.Run("waits, then sends", func(t *testing.T) { checkWaitsThenSends(t, p) })
	t.Run("silent connections pin no child", func(t *testing.T) { checkSilentHeld(t, p) })
	t.Run("idle keep-alive given back", func(t *testing.T) { checkGivenBack(t, p) })
	if s, err := p.Held(); err != nil || s.Pool.Stats.Garbage != 0 {
		t.Errorf("stats: got %+v, %v; want no garbage", s.Pool.Stats, err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// checkNoHandoff: requests sent as soon as the connection is up (the
// listener defers each connection until its bytes are in, TCP_DEFER_ACCEPT)
// are served by the children with no handoff, and the children count them.
func checkNoHandoff(t *testing.T, p *pool) {
	before, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	checkConcurrent(t, p) // 200 connections, 8 at a time
	after, err := p.WaitHeld(func(d statusDoc) bool {
		return d.Pool.Stats.Served >= before.Pool.Stats.Served+200
	})
	if err != nil {
		t.Fatalf("want 200 more connections served: %v", err)
	}
	b, a := before.Pool.Stats, after.Pool.Stats
	if a.Held != b.Held || a.Handoffs != b.Handoffs {
		t.Errorf("held, handed over: got %d, %d more; want none: the children serve ready connections",
			a.Held-b.Held, a.Handoffs-b.Handoffs)
	}
}

// checkWaitsThenSends: a client that connects and sends nothing until the
// master holds its connection (a child accepted it once the listener's
// TCP_DEFER_ACCEPT ran out, and gave it up: K, not ready) is served once it
// sends, by a handoff.
func checkWaitsThenSends(t *testing.T, p *pool) {
	before, err := p.Held()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := dial(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := p.WaitHeld(func(d statusDoc) bool { return d.Pool.Held.Held-d.Pool.Held.Parked >= 1 }); err != nil {
		t.Fatalf("want the silent connection held by the master: %v", err)
	}
	fmt.Fprint(conn, "GET /echo?late HTTP/1.1\r\nConnection: close\r\n\r\n")
	got, err := readAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	checkBodies(t, got, []string{"GET /echo late "})
	s, err := p.Held()
	b, a := before.Pool.Stats, s.Pool.Stats
	if err != nil || a.Held != b.Held+1 || a.Handoffs != b.Handoffs+1 {
		t.Errorf("held, handed over: got %d, %d more (%v); want 1, 1", a.Held-b.Held, a.Handoffs-b.Handoffs, err)
	}
}

// checkSilentHeld: more silent and half-sent connections than children are
// all held by the master, both children stay idle, and a good client is
// served meanwhile.
func checkSilentHeld(t *testing.T, p *pool) {
	const silent, slow = 4, 4
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := range silent + slow {
		c, err := dial(p.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		idle = append(idle, c)
		if i >= silent {
			fmt.Fprintf(c, "GET /echo?slow%d HTTP/1.1\r\nHost: x\r\n", i)
		}
	}
	_, err := p.WaitHeld(func(d statusDoc) bool { return d.Pool.Held.Held >= silent+slow && d.Pool.Idle == 2 })
	if err != nil {
		t.Fatalf("want %d connections held and both children idle: %v", silent+slow, err)
	}
	got, err := exchange(p.addr, "GET /echo?good HTTP/1.1\r\nConnection: close\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	checkBodies(t, got, []string{"GET /echo good "})
}
