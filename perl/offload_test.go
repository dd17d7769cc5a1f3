package perl_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
)

// offloadSize is t/offload.psgi's body: five times a unix socket's send
// buffer, so a child that wrote it itself would wait. (A loopback TCP
// connection buffers about 4 MiB: the test listens on a unix socket, as
// python/offload_test.go does.)
const (
	offloadSize = 1 << 20
	slowRate    = 256 << 10 // bytes per second a slow client reads
)

// TestOffload runs the handler under --accept-filter http with 2 children
// (docs/perl.md, "Slow readers: write completion"): 8 clients read a 1 MiB
// response (a one-element array body, or a file handle) at 256 KiB/s.
// The children hand each to the master (W) and are free again: a status
// shows the master sending and no child busy, a good client is answered
// while no slow one has finished, and every slow client gets exactly the
// bytes.
func TestOffload(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "http.sock")
	p := startPoolAt(t, "unix:"+sock, sock, nil, "dispatch", "offload.psgi", "--accept-filter", "http",
		"--start-children", "2", "--min-children", "2", "--max-children", "2", "--hold-timeout", "60s")
	want := pooltest.OffloadSum(offloadSize)
	const slow = 8
	var finished atomic.Int32
	errs := make(chan error, slow)
	for i := range slow {
		path := [2]string{"/bytes", "/file"}[i%2]
		go func() {
			sum, err := pooltest.SlowRead(sock, path, slowRate)
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
	conn, err := net.DialTimeout("unix", sock, ioBound)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(ioBound))
	if err := echoRoundTrip(conn, bufio.NewReader(conn), "/echo?good"); err != nil {
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
	if c := p.complaints(); len(c) > 0 {
		t.Errorf("actd complained:\n%s", strings.Join(c, "\n"))
	}
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// echoRoundTrip asks for target (/echo?...) on conn and checks the answer
// of t/offload.psgi's /echo, the connection kept alive.
func echoRoundTrip(conn net.Conn, r *bufio.Reader, target string) error {
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target); err != nil {
		return err
	}
	n, err := pooltest.ContentLength(r)
	if err != nil {
		return err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	want := "GET /echo " + target[len("/echo?"):] + " "
	if string(body) != want {
		return fmt.Errorf("got %q, want %q", body, want)
	}
	return nil
}
