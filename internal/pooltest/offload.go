package pooltest

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// OffloadSize is the write-completion test apps' body: five times a unix
// socket's send buffer, so a child that wrote it itself would wait. (A
// loopback TCP connection buffers about 4 MiB: the tests listen on a unix
// socket, as cmd/actd's TestOffloadSlowReaders does.)
const OffloadSize = 1 << 20

// SlowRate is how many bytes a second a slow client of CheckOffload reads.
const SlowRate = 256 << 10

// ioBound is how long CheckOffload's good client may take; not a speed
// assertion.
const ioBound = 20 * time.Second

// CheckOffload is the write-completion check of a language's worker
// (python/testdata/offloadapp.py, perl/t/offload.psgi) under a pool p of 2
// children and the http filter, listening on the unix socket sock: 8
// clients read an OffloadSize body (/bytes and /file in turn) at
// SlowRate. The children hand each to the master (W) and are free again: a
// status shows the master sending at least 4 and no child busy; a good
// client (good, on a connection of its own) is answered while no slow one
// has finished; every slow client gets exactly the bytes (checksum); the
// stats count at least 4 handed over, all finished; complaints (nil, or
// the pool's log warnings) are none; SIGTERM exits 0.
func CheckOffload(t *testing.T, p *Proc, sock string, good func(net.Conn, *bufio.Reader) error, complaints func() []string) {
	t.Helper()
	want := OffloadSum(OffloadSize)
	const slow = 8
	var finished atomic.Int32
	errs := make(chan error, slow)
	for i := range slow {
		path := [2]string{"/bytes", "/file"}[i%2]
		go func() {
			sum, err := SlowRead(sock, path, SlowRate)
			if err == nil && sum != want {
				err = fmt.Errorf("%s: checksum %x, want %x", path, sum[:8], want[:8])
			}
			finished.Add(1)
			errs <- err
		}()
	}
	if _, err := p.WaitStatus(func(d Status) bool {
		return d.Pool.Held != nil && d.Pool.Held.Sending >= slow/2 && d.Pool.Busy == 0
	}); err != nil {
		t.Errorf("want the master sending at least %d responses, no child busy: %v", slow/2, err)
	}
	checkGood(t, sock, good)
	if n := finished.Load(); n > 0 {
		t.Errorf("%d of %d slow clients finished before a good client was answered, want 0", n, slow)
	}
	for range slow {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	checkFinished(t, p, slow/2)
	if complaints != nil {
		if c := complaints(); len(c) > 0 {
			t.Errorf("actd complained:\n%s", strings.Join(c, "\n"))
		}
	}
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// checkGood runs good on a new connection to sock, and fails t if it
// returns an error.
func checkGood(t *testing.T, sock string, good func(net.Conn, *bufio.Reader) error) {
	t.Helper()
	conn, err := net.DialTimeout("unix", sock, ioBound)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioBound))
	if err := good(conn, bufio.NewReader(conn)); err != nil {
		t.Errorf("good client: %v", err)
	}
}

// checkFinished fails t unless p's stats count at least atLeast responses
// handed to the master, and as many finished.
func checkFinished(t *testing.T, p *Proc, atLeast uint64) {
	t.Helper()
	st, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Pool.Stats; s.Finishing < atLeast || s.Finished != s.Finishing {
		t.Errorf("finishing %d, finished %d: want at least %d handed over, all finished", s.Finishing, s.Finished, atLeast)
	}
}
