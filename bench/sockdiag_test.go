package main

import (
	"net"
	"os"
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
	counts := waitCounts(t, port, 3, 0)
	if holdsSocket(os.Getpid(), counts.inodes) {
		t.Error("holdsSocket before accepting: got true, want false")
	}
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	counts = waitCounts(t, port, 2, 1)
	if len(counts.inodes) != 1 {
		t.Errorf("got %d inodes, want 1", len(counts.inodes))
	}
	if !holdsSocket(os.Getpid(), counts.inodes) {
		t.Error("holdsSocket after accepting: got false, want true (this process holds it)")
	}
}

// waitCounts polls countSockets until it reports queue and accepted, for up
// to 2 s (the kernel moves a connection to the accept queue just after
// connect returns), and returns the last counts.
func waitCounts(t *testing.T, port, queue, accepted int) socketCounts {
	t.Helper()
	var got socketCounts
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if got, err = countSockets(port); err != nil {
			t.Fatalf("countSockets: %v", err)
		}
		if got.queue == queue && got.accepted == accepted {
			return got
		}
	}
	t.Errorf("got queue %d, accepted %d, want %d, %d", got.queue, got.accepted, queue, accepted)
	return got
}
