package main

import (
	"errors"
	"net"
	"testing"
	"time"
)

// TestLimitListener: with one slot, a second connection is accepted only
// once the first is closed, and closing the listener ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(inner, 1)
	for range 2 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	select {
	case err := <-accepted:
		t.Fatalf("second Accept with the only slot taken: got %v, want it to wait", err)
	case <-time.After(100 * time.Millisecond):
	}
	first.Close()
	first.Close() // a second Close gives nothing back twice
	if err := <-accepted; err != nil {
		t.Fatalf("second Accept after the first closed: %v", err)
	}
	go func() { _, err := ln.Accept(); accepted <- err }()
	ln.Close()
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on a closed listener: got %v, want %v", err, net.ErrClosed)
	}
}
