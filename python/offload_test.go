package python_test

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
)

// offloadSize is testdata/offloadapp.py's body: five times a unix
// socket's send buffer, so a child that wrote it itself would wait. (A
// loopback TCP connection buffers about 4 MiB: the test listens on a unix
// socket, as cmd/actd's TestOffloadSlowReaders does.)
const (
	offloadSize = 1 << 20
	slowRate    = 256 << 10 // bytes per second a slow client reads
)

// TestOffload runs the adapter under --accept-filter http with 2 children
// (docs/python.md, "Write completion"): 8 clients read a 1 MiB response
// (a one-element body, or a wsgi.file_wrapper's file) at 256 KiB/s. The
// children hand each to the master (W) and are free again: a status shows
// the master sending and no child busy, a good client is answered while no
// slow one has finished, and every slow client gets exactly the bytes.
func TestOffload(t *testing.T) {
	py := python(t)
	sock := filepath.Join(t.TempDir(), "http.sock")
	args := append([]string{"--listen", "unix:" + sock, "--accept", "dispatch"}, filterFlags...)
	p := startActd(t, sock, append(args, "--", py, "-m", "actd.wsgi", "offloadapp:app")...)
	want := pooltest.OffloadSum(offloadSize)
	const slow = 8
	var finished atomic.Int32
	errs := make(chan error, slow)
	for i := range slow {
		path := [2]string{"/bytes", "/file"}[i%2]
		go func() {
			sum, err := pooltest.SlowRead(p.addr, path, slowRate)
			if err == nil && sum != want {
				err = fmt.Errorf("%s: checksum %x, want %x", path, sum[:8], want[:8])
			}
			finished.Add(1)
			errs <- err
		}()
	}
	if _, err := p.WaitStatus(func(d statusDoc) bool {
		return d.Pool.Held != nil && d.Pool.Held.Sending >= slow/2 && d.Pool.Busy == 0
	}); err != nil {
		t.Errorf("want the master sending at least %d responses, no child busy: %v", slow/2, err)
	}
	conn, err := net.DialTimeout("unix", sock, ioTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioTimeout))
	if err := roundTrip(conn, bufio.NewReader(conn), "/echo?good"); err != nil {
		t.Errorf("good client: %v", err)
	}
	if n := finished.Load(); n > 0 {
		t.Errorf("%d of %d slow clients finished before a good client was answered, want 0", n, slow)
	}
	for range slow {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	st, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Pool.Stats; s.Finishing < slow/2 || s.Finished != s.Finishing {
		t.Errorf("finishing %d, finished %d: want at least %d handed over, all finished", s.Finishing, s.Finished, slow/2)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}
