package main

import (
	"net"
	"testing"
	"time"
)

// TestCountSockets opens a real listener, queues connections without
// accepting them, accepts one, and checks what sock_diag reports.
func TestCountSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	waitCounts(t, port, socketCounts{queue: 3, accepted: 0})
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	waitCounts(t, port, socketCounts{queue: 2, accepted: 1})
}

// waitCounts polls countSockets until it returns want, for up to 2 s (the
// kernel moves a connection to the accept queue just after connect returns).
func waitCounts(t *testing.T, port int, want socketCounts) {
	t.Helper()
	var got socketCounts
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if got, err = countSockets(port); err != nil {
			t.Fatalf("countSockets: %v", err)
		}
		if got == want {
			return
		}
	}
	t.Errorf("got %+v, want %+v", got, want)
}
