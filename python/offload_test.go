package python_test

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
	want := offloadSum()
	const slow = 8
	var finished atomic.Int32
	errs := make(chan error, slow)
	for i := range slow {
		path := [2]string{"/bytes", "/file"}[i%2]
		go func() {
			sum, err := slowRead(p.addr, path)
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

// offloadSum is the checksum of testdata/offloadapp.py's BODY.
func offloadSum() [32]byte {
	b := make([]byte, offloadSize)
	for i := range b {
		b[i] = byte(131*i + i>>10)
	}
	return sha256.Sum256(b)
}

// slowRead asks for path on a connection to the unix socket sock, reads
// the body at slowRate, and returns its checksum.
func slowRead(sock, path string) ([32]byte, error) {
	conn, err := net.DialTimeout("unix", sock, ioTimeout)
	if err != nil {
		return [32]byte{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		return [32]byte{}, err
	}
	r := bufio.NewReader(conn)
	n, err := contentLength(r)
	if err != nil {
		return [32]byte{}, fmt.Errorf("%s: %w", path, err)
	}
	h := sha256.New()
	const chunk = 16 << 10
	for left := n; left > 0; {
		k, err := io.CopyN(h, r, int64(min(left, chunk)))
		if err != nil {
			return [32]byte{}, fmt.Errorf("%s: %d of %d bytes left: %w", path, left, n, err)
		}
		left -= int(k)
		time.Sleep(chunk * time.Second / slowRate) // a slow reader: the thing tested
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// contentLength reads a 200 answer's head and returns its Content-Length.
func contentLength(r *bufio.Reader) (int, error) {
	status, err := r.ReadString('\n')
	if err != nil || status != "HTTP/1.1 200 OK\r\n" {
		return 0, fmt.Errorf("status %q: %v", status, err)
	}
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		if line == "\r\n" {
			if n < 0 {
				return 0, fmt.Errorf("no Content-Length")
			}
			return n, nil
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
}
