package prefork_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/prefork"
	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"
)

// recordStore is a prefork.Store that keeps a dup of each fd stored, as
// systemd would, and records what the pool asked.
type recordStore struct {
	mu    sync.Mutex
	n     int
	kept  map[string]int // name -> dup
	log   []string       // "keep NAME" and "remove NAME", in order
	parks int            // Keep calls with parked
}

func newRecordStore() *recordStore { return &recordStore{kept: map[string]int{}} }

func (s *recordStore) store() prefork.Store {
	return prefork.Store{Keep: s.keep, Remove: s.remove}
}

func (s *recordStore) keep(fd, listener int, parked bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	s.n++
	name := fmt.Sprintf("held-%d-%d", listener, s.n)
	if parked {
		s.parks++
		name = fmt.Sprintf("parked-%d-%d", listener, s.n)
	}
	s.kept[name] = dup
	s.log = append(s.log, "keep "+name)
	return name, nil
}

func (s *recordStore) remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fd, ok := s.kept[name]; ok {
		unix.Close(fd)
		delete(s.kept, name)
	}
	s.log = append(s.log, "remove "+name)
	return nil
}

// state returns the log so far and the names stored now.
func (s *recordStore) state() (log, now []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.kept {
		now = append(now, name)
	}
	slices.Sort(now)
	return slices.Clone(s.log), now
}

// startStorePool starts a keephttp pool under the http filter with store s
// and the connections stored.
func startStorePool(t *testing.T, s prefork.Store, stored []prefork.Stored) *testPool {
	t.Helper()
	cfg := fastConfig(protocol.Dispatch)
	cfg.MinChildren, cfg.MaxChildren, cfg.StartChildren = 2, 2, 2
	cfg.Filter, cfg.HoldTimeout = acceptfilter.HTTP, time.Minute
	fd, addr := loopbackListener(t)
	cfg.Program = testProgram("keephttp")
	p, err := prefork.New(cfg, []prefork.Listener{{Name: "test", FD: fd}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.UseStore(s, stored); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tp := &testPool{Pool: p, program: cfg.Program, addr: addr, fd: fd, cancel: cancel, runErr: make(chan error, 1)}
	go func() { tp.runErr <- p.Run(ctx) }()
	t.Cleanup(func() { tp.stop(t) })
	select {
	case <-p.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("pool not ready after 10s")
	}
	return tp
}

// TestStoreKeepsHeldOnly: a request that is complete at the first look
// goes to a child without the store; a partial one is stored once, and
// removed when a child takes it; a keep-alive connection parked between two
// requests is stored as parked and removed when its next request goes out.
func TestStoreKeepsHeldOnly(t *testing.T) {
	rs := newRecordStore()
	p := startStorePool(t, rs.store(), nil)
	if body, err := get(p.addr, "/fast"); err != nil || !strings.HasSuffix(body, " /fast\n") {
		t.Fatalf("fast request: %q, %v", body, err)
	}
	if log, _ := rs.state(); len(log) != 0 {
		t.Errorf("store after a complete request: got %q, want nothing asked", log)
	}

	c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("GET /slow HTTP/1.1\r\nHost: a\r\n"))
	eventually(t, "the partial request stored", func() bool { _, now := rs.state(); return len(now) == 1 })
	c.Write([]byte("\r\n"))
	r := bufio.NewReader(c)
	if body, err := readAnswer(r); err != nil || !strings.HasSuffix(body, " /slow\n") {
		t.Fatalf("partial request completed: %q, %v", body, err)
	}
	eventually(t, "the connection parked and stored", func() bool {
		_, now := rs.state()
		return len(now) == 1 && strings.HasPrefix(now[0], "parked-0-")
	})
	c.Write([]byte("GET /again HTTP/1.1\r\nHost: a\r\n\r\n"))
	if body, err := readAnswer(r); err != nil || !strings.HasSuffix(body, " /again\n") {
		t.Fatalf("second request: %q, %v", body, err)
	}
	eventually(t, "parked again", func() bool { log, _ := rs.state(); return len(log) >= 5 })
	log, _ := rs.state()
	want := []string{"keep held-0-1", "remove held-0-1", "keep parked-0-2", "remove parked-0-2", "keep parked-0-3"}
	if !slices.Equal(log, want) {
		t.Errorf("store log: got %q, want %q", log, want)
	}
	if s := snapshot(t, p); s.Held == nil || s.Held.Stored != 1 || s.Held.StoredTotal != 3 {
		t.Errorf("snapshot: got %+v, want a store with 1 now, 3 stored", s.Held)
	}
}

// TestStoreTakesBack: connections taken back from the store at the start
// are held at once: a complete request is answered by the first idle
// child, a partial one when the rest comes, one from a listener the pool
// does not have is closed; each is removed from the store when let go.
func TestStoreTakesBack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var clients []net.Conn
	var stored []prefork.Stored
	for i, tc := range []struct {
		sent     string
		listener int
		parked   bool
	}{
		{"GET /complete HTTP/1.1\r\nHost: a\r\n\r\n", 0, true},
		{"GET /partial HTTP/1.1\r\n", 0, false},
		{"GET /nolistener HTTP/1.1\r\n\r\n", 3, false},
	} {
		c, server := connPair(t, ln)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte(tc.sent))
		clients = append(clients, c)
		name := fmt.Sprintf("held-%d-%d", tc.listener, 10+i)
		stored = append(stored, prefork.Stored{FD: server, Listener: tc.listener, Parked: tc.parked, Name: name})
	}
	rs := newRecordStore()
	p := startStorePool(t, rs.store(), stored)

	if body, err := readAnswer(bufio.NewReader(clients[0])); err != nil || !strings.HasSuffix(body, " /complete\n") {
		t.Errorf("complete request taken back: %q, %v; want it answered", body, err)
	}
	clients[1].Write([]byte("Host: a\r\n\r\n"))
	if body, err := readAnswer(bufio.NewReader(clients[1])); err != nil || !strings.HasSuffix(body, " /partial\n") {
		t.Errorf("partial request taken back, then completed: %q, %v; want it answered", body, err)
	}
	if n, err := clients[2].Read(make([]byte, 1)); err == nil {
		t.Errorf("connection of listener 3 (there is one listener): read %d bytes, want it closed", n)
	}
	eventually(t, "the three removed", func() bool {
		log, _ := rs.state()
		var removed []string
		for _, l := range log {
			if name, ok := strings.CutPrefix(l, "remove "); ok && strings.HasPrefix(name, "held-") && !strings.HasPrefix(name, "held-0-1-") {
				removed = append(removed, name)
			}
		}
		slices.Sort(removed)
		return slices.Equal(removed, []string{"held-0-10", "held-0-11", "held-3-12"})
	})
	if s := snapshot(t, p); s.Stats.Handoffs < 2 {
		t.Errorf("handoffs: got %d, want at least 2", s.Stats.Handoffs)
	}
}

// connPair returns a client connected to ln and the server side's fd,
// owned by the caller.
func connPair(t *testing.T, ln net.Listener) (net.Conn, int) {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc, err := s.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	rc.Control(func(raw uintptr) { fd, err = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return c, fd
}
