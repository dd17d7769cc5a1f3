package slowclient

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestOpenAndTrickle: the slow connections send Head and then a byte per
// period; the silent ones send nothing; a refused address is an error.
func TestOpenAndTrickle(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns, err := Open(ln.Addr().String(), 2, 1, 2, 5*time.Second)
	t.Cleanup(conns.Close)
	if err != nil || len(conns.Slow) != 2 || len(conns.Silent) != 1 {
		t.Fatalf("got %d slow, %d silent, %v; want 2, 1, no error", len(conns.Slow), len(conns.Silent), err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go conns.Trickle(10*time.Millisecond, stop)
	got := map[string]int{}
	for range conns.Len() {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got[firstBytes(c, len(Head)+2)]++
	}
	if want := Head + "xx"; got[want] != 2 || got[""] != 1 {
		t.Errorf("got %v, want 2 connections sending %q and 1 sending nothing", got, want)
	}
	ln.Close()
	if c, err := Open(ln.Addr().String(), 1, 0, 1, time.Second); err == nil || c.Len() != 0 {
		t.Errorf("a closed port: got %d connections, %v; want none and an error", c.Len(), err)
	}
}

// firstBytes returns the first n bytes c sends within half a second, or ""
// if it sends nothing by then.
func firstBytes(c net.Conn, n int) string {
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, n)
	got, _ := io.ReadFull(c, buf)
	return string(buf[:got])
}
