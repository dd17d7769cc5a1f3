package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/internal/pooltest"
)

// Write completion (docs/protocol.md): the built-in handler hands a
// response its client reads slowly to the master, which finishes it.

// offloadSize is the size of the slow responses: five times a unix
// socket's send buffer, so a child that wrote them itself would wait.
const offloadSize = 1 << 20

// startOffloading starts actd with 8 children under the http filter, the
// built-in handler serving dir, and args added.
func startOffloading(t *testing.T, dir string, args ...string) *actd {
	t.Helper()
	base := []string{"--accept-filter", "http", "--start-children", "8", "--min-children", "8", "--max-children", "8",
		"--handler-files", dir}
	return startActd(t, nil, append(base, args...)...)
}

// bigFile writes offloadSize random bytes to dir/big and returns their
// checksum.
func bigFile(t *testing.T, dir string) [32]byte {
	t.Helper()
	b := make([]byte, offloadSize)
	rand.Read(b)
	if err := os.WriteFile(filepath.Join(dir, "big"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// generatedSum is the checksum of /bytes/n's body.
func generatedSum(n int) [32]byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = bodyByte(i)
	}
	return sha256.Sum256(b)
}

// plainClients sends plain requests, one at a time on each of n
// connections, until stop closes, and counts answers and failures.
func plainClients(a *actd, n int, stop <-chan struct{}) (wait func() (ok, failed int64)) {
	var wg sync.WaitGroup
	var good, bad atomic.Int64
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := a.get(); err != nil {
					bad.Add(1)
				} else {
					good.Add(1)
				}
				time.Sleep(20 * time.Millisecond) // pacing the client loop
			}
		}()
	}
	return func() (int64, int64) {
		wg.Wait()
		return good.Load(), bad.Load()
	}
}

// TestOffloadSlowReaders: 32 clients read a 1 MiB response (generated, or
// a file) at 256 KiB/s from 8 children, beside good clients. The children
// hand the responses to the master and are free again: a status shows
// them all idle while the master sends; every slow client gets exactly
// the bytes (checksum), every good request is answered.
func TestOffloadSlowReaders(t *testing.T) {
	dir := t.TempDir()
	fileSum := bigFile(t, dir)
	genSum := generatedSum(offloadSize)
	a := startOffloading(t, dir)
	waitFor(t, "8 children idle", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle == 8 })
	stop := make(chan struct{})
	waitGood := plainClients(a, 4, stop)
	const slow = 32
	errs := make(chan error, slow)
	for i := range slow {
		go func() {
			path, want := "/bytes/"+strconv.Itoa(offloadSize), genSum
			if i%2 == 1 {
				path, want = "/files/big", fileSum
			}
			got, err := pooltest.SlowRead(a.sock, path, 256<<10)
			if err == nil && got != want {
				err = fmt.Errorf("%s: checksum %x, want %x", path, got[:8], want[:8])
			}
			errs <- err
		}()
	}
	waitFor(t, "the master sending, no child busy", 10*time.Second, func() bool {
		s := a.status(t).Snapshot
		return s.Held != nil && s.Held.Sending >= slow/2 && s.Busy == 0
	})
	for range slow {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	good, failed := waitGood()
	if failed > 0 || good == 0 {
		t.Errorf("good requests: %d answered, %d failed; want all answered", good, failed)
	}
	st := a.status(t).Snapshot
	if st.Stats.Finishing < slow/2 || st.Stats.Finished != st.Stats.Finishing || st.Held.Sending != 0 {
		t.Errorf("finishing %d, finished %d, sending %d: want at least %d handed over, all finished",
			st.Stats.Finishing, st.Stats.Finished, st.Held.Sending, slow/2)
	}
}

// TestOffloadStalledReader: a client that reads nothing of its response
// leaves no child busy (the master holds it), and is closed after
// --send-timeout; it got a part of the response, then the end of file.
// Status, metrics and the journal show the response held, then the cut.
func TestOffloadStalledReader(t *testing.T) {
	addr := freeAddr(t)
	a := startOffloading(t, t.TempDir(), "--send-timeout", "1s", "--metrics-listen", addr)
	c, err := net.Dial("unix", a.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /bytes/%d HTTP/1.1\r\nHost: a\r\n\r\n", offloadSize)
	waitFor(t, "the master holding the response, no child busy", 10*time.Second, func() bool {
		s := a.status(t).Snapshot
		return s.Held != nil && s.Held.Sending == 1 && s.Busy == 0
	})
	var text bytes.Buffer
	printStatus(&text, a.status(t), "")
	_, metrics, err := scrape(addr, "/metrics")
	for _, want := range []string{"finished by the master: 1 responses", "actd_offload_connections 1\n", "actd_offloaded_total 1\n"} {
		if !strings.Contains(text.String()+metrics, want) {
			t.Errorf("status and metrics lack %q (%v):\n%s%s", want, err, text.String(), metrics)
		}
	}
	waitFor(t, "a send timeout", 10*time.Second, func() bool { return a.status(t).Snapshot.Stats.SendTimeouts == 1 })
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.Copy(io.Discard, c)
	if err != nil || got >= offloadSize {
		t.Errorf("read %d bytes, %v; want part of the response, then the end of file", got, err)
	}
	if s := a.status(t).Snapshot; s.Held.Sending != 0 || s.Stats.Finished != 0 {
		t.Errorf("sending %d, finished %d after the timeout; want 0, 0", s.Held.Sending, s.Stats.Finished)
	}
	_, metrics, err = scrape(addr, "/metrics")
	if !strings.Contains(metrics, "actd_send_timeouts_total 1\n") || !strings.Contains(a.stderr.String(), "event=send_timeout") {
		t.Errorf("metrics or journal lack the send timeout (%v):\n%s", err, metrics)
	}
}

// TestOffloadKeepAlive: after a response the master finished, the
// connection is parked, and its next request is answered.
func TestOffloadKeepAlive(t *testing.T) {
	dir := t.TempDir()
	fileSum := bigFile(t, dir)
	a := startOffloading(t, dir)
	c, err := net.Dial("unix", a.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	for i, path := range []string{"/files/big", "/bytes/" + strconv.Itoa(offloadSize)} {
		want := fileSum
		if i == 1 {
			want = generatedSum(offloadSize)
		}
		got, err := pooltest.SlowGet(c, r, path, 1<<20)
		if err != nil || got != want {
			t.Fatalf("%s: checksum %x, %v; want %x", path, got[:8], err, want[:8])
		}
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	n, err := pooltest.ContentLength(r)
	body := make([]byte, max(n, 0))
	if err == nil {
		_, err = io.ReadFull(r, body)
	}
	if err != nil || !bytes.HasPrefix(body, []byte("slot=")) {
		t.Fatalf("the request after them: %q, %v", body, err)
	}
	if s := a.status(t).Snapshot; s.Stats.Finished != 2 || s.Stats.Parked < 2 {
		t.Errorf("finished %d, parked %d; want 2 responses finished by the master, then parked", s.Stats.Finished, s.Stats.Parked)
	}
}

// TestOffloadTotal: with --offload-total at one response, of 4 slow
// readers at once the master finishes the first and gives the others back
// to children (U), which write them: every client still gets exactly the
// bytes, and the next request on each connection is answered.
func TestOffloadTotal(t *testing.T) {
	dir := t.TempDir()
	fileSum := bigFile(t, dir)
	a := startOffloading(t, dir, "--offload-total", strconv.Itoa(offloadSize))
	waitFor(t, "8 children idle", 10*time.Second, func() bool { return a.status(t).Snapshot.Idle == 8 })
	const slow = 4
	errs := make(chan error, slow)
	for range slow {
		go func() {
			c, err := net.Dial("unix", a.sock)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(c)
			got, err := pooltest.SlowGet(c, r, "/files/big", 512<<10)
			if err == nil && got != fileSum {
				err = fmt.Errorf("checksum %x, want %x", got[:8], fileSum[:8])
			}
			if err == nil {
				fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
				_, err = pooltest.ContentLength(r)
			}
			errs <- err
		}()
	}
	for range slow {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	st := a.status(t).Snapshot.Stats
	if st.Finished < 1 || st.OverTotal < 1 || st.Finished+st.OverTotal != slow {
		t.Errorf("finished by the master %d, given back to children %d; want both, %d in all", st.Finished, st.OverTotal, slow)
	}
}

// TestOffloadOutlivesStop: SIGTERM while the master finishes a response;
// the children drain and exit, the send goes on to its end (the client
// gets every byte), then actd exits 0. With a graceful timeout shorter
// than the send, the send is cut at the timeout instead.
func TestOffloadOutlivesStop(t *testing.T) {
	for _, tc := range []struct {
		graceful string
		whole    bool
	}{{"30s", true}, {"500ms", false}} {
		t.Run(tc.graceful, func(t *testing.T) {
			dir := t.TempDir()
			fileSum := bigFile(t, dir)
			a := startOffloading(t, dir, "--graceful-timeout", tc.graceful)
			c, err := net.Dial("unix", a.sock)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			r := bufio.NewReader(c)
			fmt.Fprintf(c, "GET /files/big HTTP/1.1\r\nHost: a\r\n\r\n")
			n, err := pooltest.ContentLength(r)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the master sending", 10*time.Second, func() bool {
				s := a.status(t).Snapshot
				return s.Held != nil && s.Held.Sending == 1
			})
			a.signal(t, syscall.SIGTERM)
			h := sha256.New()
			got, err := io.Copy(h, io.LimitReader(&slowReader{r, 256 << 10}, int64(n)))
			whole := err == nil && got == int64(n) && bytes.Equal(h.Sum(nil), fileSum[:])
			if whole != tc.whole {
				t.Errorf("read %d of %d bytes (%v), whole %v; want whole %v", got, n, err, whole, tc.whole)
			}
			if code := a.wait(t, 15*time.Second); code != 0 {
				t.Errorf("exit status %d, want 0", code)
			}
		})
	}
}

// slowReader reads from r at about rate bytes per second.
type slowReader struct {
	r    io.Reader
	rate int
}

func (s *slowReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p[:min(len(p), 16<<10)])
	time.Sleep(time.Duration(n) * time.Second / time.Duration(s.rate)) // a slow reader: the thing tested
	return n, err
}
