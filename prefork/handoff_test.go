package prefork_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actd/actd/internal/slowclient"
	"github.com/actd/actd/prefork"
	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// fdReader reads a blocking socket fd.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(r), p)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// keepHTTP is the keephttp test worker: it answers each HTTP/1.x request
// head with "slot=K pid=P PATH\n", after delay for a path with "slow" in it,
// and keeps HTTP/1.1 connections open; under a filter it gives a connection
// back after each answer when nothing more is buffered.
func keepHTTP(delay time.Duration) worker.KeepFDHandler {
	id := "slot=" + os.Getenv(protocol.EnvSlot) + " pid=" + strconv.Itoa(os.Getpid())
	return func(fd int, parkable bool) bool {
		r := bufio.NewReader(fdReader(fd))
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return false
			}
			for h := line; h != "\r\n" && h != "\n"; {
				if h, err = r.ReadString('\n'); err != nil {
					return false
				}
			}
			fields := strings.Fields(line)
			if len(fields) != 3 {
				return false
			}
			if strings.Contains(fields[1], "slow") {
				time.Sleep(delay) // a slow request, the worker's work: the thing tested
			}
			body := id + " " + fields[1] + "\n"
			keep := fields[2] == "HTTP/1.1"
			head := "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
			if !keep {
				head += "Connection: close\r\n"
			}
			if _, err := unix.Write(fd, []byte(head+"\r\n"+body)); err != nil || !keep {
				return false
			}
			if parkable && r.Buffered() == 0 {
				return true
			}
		}
	}
}

// readAnswer reads one answer of keepHTTP from r and returns its body line.
func readAnswer(r *bufio.Reader) (string, error) {
	status, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200 ") {
		return "", fmt.Errorf("status %q", status)
	}
	for {
		h, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if h == "\r\n" {
			break
		}
	}
	return r.ReadString('\n')
}

// get sends one HTTP/1.0 request for path and returns the body line.
func get(addr, path string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("GET " + path + " HTTP/1.0\r\n\r\n")); err != nil {
		return "", err
	}
	return readAnswer(bufio.NewReader(c))
}

// slowClients opens slow connections to addr that send the start of a
// request and then one header byte per period, never finishing it, and
// silent ones that send nothing; the trickle runs until stop closes, the
// connections stay open until the test ends.
func slowClients(t *testing.T, addr string, slow, silent int, period time.Duration, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	conns, err := slowclient.Open(addr, slow, silent, 1, 5*time.Second)
	t.Cleanup(conns.Close)
	if err != nil {
		t.Fatalf("slow clients: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { conns.Trickle(period, stop) })
	return &wg
}

// filterWorkers are the two paths under a filter: children that screen
// (the Go library at revision 4: the master holds only what is not ready)
// and children that take only what the master hands over (revision 3: it
// accepts and holds every connection).
var filterWorkers = []struct {
	name, worker string
	screens      bool
}{
	{"screen", "keephttp", true},
	{"master-first", "keephttp3", false},
}

// TestSlowClientsHeld: 500 connections that send a header byte a second
// and 64 silent ones, against max-children 8 under the http filter, while
// good clients run: the master holds the slow and silent ones, no child
// keeps one, and every good request is answered. Children that screen
// serve the good ones without the master; for the others the master hands
// over each.
func TestSlowClientsHeld(t *testing.T) {
	for _, w := range filterWorkers {
		t.Run(w.name, func(t *testing.T) {
			cfg := fastConfig(protocol.Dispatch)
			cfg.MaxChildren, cfg.StartChildren = 8, 2
			cfg.Filter, cfg.HoldTimeout = acceptfilter.HTTP, time.Minute
			p := startPool(t, cfg, w.worker)
			stop := make(chan struct{})
			wg := slowClients(t, p.addr, 500, 64, time.Second, stop)
			defer wg.Wait()
			defer close(stop)
			eventually(t, "564 connections held", func() bool {
				s := snapshot(t, p)
				return s.Held != nil && s.Held.Held == 564
			})
			goodClients(t, p.addr, 4, 2500*time.Millisecond) // the slow clients send two more bytes meanwhile
			s := snapshot(t, p)
			// Held in all: the slow ones, and the good ones the master handed over.
			if s.Held.Held != 564 || s.Children > 8 || s.Stats.Held != 564+s.Stats.Handoffs {
				t.Errorf("after the good clients: held %d now, %d in all, children %d, handoffs %d; want 564, 564 + handoffs, at most 8",
					s.Held.Held, s.Stats.Held, s.Children, s.Stats.Handoffs)
			}
			want := s.Stats.Served // master-first: every connection served was handed over
			if w.screens {
				want = 0 // no slow one became ready, and the good ones never reached the master
			}
			if s.Stats.Handoffs != want {
				t.Errorf("children served %d connections, the master handed over %d: want %d", s.Stats.Served, s.Stats.Handoffs, want)
			}
		})
	}
}

// goodClients runs n clients that send HTTP/1.0 requests for d (at most
// 1000 each); every request must be answered.
func goodClients(t *testing.T, addr string, n int, d time.Duration) {
	t.Helper()
	var good sync.WaitGroup
	var mu sync.Mutex
	var answered, failed int
	for g := range n {
		good.Go(func() {
			for i, end := 0, time.Now().Add(d); i < 1000 && time.Now().Before(end); i++ {
				body, err := get(addr, fmt.Sprintf("/good/%d/%d", g, i))
				mu.Lock()
				if err != nil || !strings.HasPrefix(body, "slot=") {
					if failed++; failed <= 5 {
						t.Errorf("good request %d/%d: %q, %v", g, i, body, err)
					}
				} else {
					answered++
				}
				mu.Unlock()
			}
		})
	}
	good.Wait()
	if failed > 0 || answered == 0 {
		t.Errorf("good requests: %d answered, %d failed; want all answered", answered, failed)
	}
}

// TestParkedConnectionMoves: a keep-alive connection given back between
// two requests is served by whichever child is idle when its next request
// comes, and its client sees one unbroken connection.
func TestParkedConnectionMoves(t *testing.T) {
	for _, w := range filterWorkers {
		t.Run(w.name, func(t *testing.T) {
			cfg := fastConfig(protocol.Dispatch)
			cfg.MinChildren, cfg.MaxChildren, cfg.StartChildren, cfg.MinSpare, cfg.MaxSpare = 2, 2, 2, 0, 2
			cfg.Filter = acceptfilter.HTTP
			p := startPool(t, cfg, w.worker, "ACTD_TEST_DELAY=1s")
			eventually(t, "two idle children", func() bool { return snapshot(t, p).Idle == 2 })
			parkedMoves(t, p)
			// master-first: the three requests were handed over; screening:
			// only the parked connection's second one.
			want := uint64(3)
			if w.screens {
				want = 1
			}
			if s := snapshot(t, p); s.Stats.Parked < 1 || s.Stats.Handoffs != want {
				t.Errorf("parked %d, handoffs %d; want at least 1 and %d", s.Stats.Parked, s.Stats.Handoffs, want)
			}
		})
	}
}

// parkedMoves sends a request on a keep-alive connection, waits for it to
// be parked, makes slot 0 busy with another client, and sends the next
// request on the first connection: slot 1 must answer it.
func parkedMoves(t *testing.T, p *testPool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	c.Write([]byte("GET /first HTTP/1.1\r\n\r\n"))
	first, err := readAnswer(r)
	if err != nil || !strings.HasPrefix(first, "slot=0 ") {
		t.Fatalf("first answer %q, %v; want one from slot 0", first, err)
	}
	eventually(t, "the connection parked", func() bool {
		s := snapshot(t, p)
		return s.Held != nil && s.Held.Parked == 1
	})
	slow := make(chan string, 1)
	go func() { body, err := get(p.addr, "/slow"); slow <- fmt.Sprint(body, err) }()
	eventually(t, "slot 0 busy with another client", func() bool {
		s := snapshot(t, p)
		return len(s.Slots) > 0 && s.Slots[0].State == "B"
	})
	c.Write([]byte("GET /second HTTP/1.1\r\n\r\n"))
	second, err := readAnswer(r)
	if err != nil || !strings.HasPrefix(second, "slot=1 ") || !strings.HasSuffix(second, " /second\n") {
		t.Errorf("second answer on the same connection %q, %v; want one from slot 1", second, err)
	}
	if got := <-slow; !strings.HasPrefix(got, "slot=0 ") {
		t.Errorf("slow request: %q, want slot 0's answer", got)
	}
}

// TestFilterNeedsHandoffWorker: under a filter, a worker whose hello does
// not announce handoff stops the pool with an error naming the setting and
// the fix, instead of leaving connections without a child.
func TestFilterNeedsHandoffWorker(t *testing.T) {
	cfg := fastConfig(protocol.Dispatch)
	cfg.Filter = acceptfilter.HTTP
	err := runRefused(t, cfg, "nohandoff")
	var fe *prefork.FieldError
	if !errors.As(err, &fe) || fe.Field != "accept-filter" || !strings.Contains(err.Error(), "use --accept-filter none") {
		t.Errorf("Run: got %v, want a FieldError for accept-filter naming the fix", err)
	}
}

// TestDataFilterDefersAccept: the data filter sets TCP_DEFER_ACCEPT on the
// listener in every mode (where children accept, it is the filter; in
// dispatch mode it spares the master a look), and no filter leaves it off.
// The pool still serves.
func TestDataFilterDefersAccept(t *testing.T) {
	for _, tc := range []struct {
		mode   protocol.Mode
		filter acceptfilter.Filter
		defers bool
	}{
		{protocol.Dispatch, acceptfilter.None, false},
		{protocol.Dispatch, acceptfilter.Data, true},
		{protocol.Exclusive, acceptfilter.None, false},
		{protocol.Exclusive, acceptfilter.Data, true},
		{protocol.Shared, acceptfilter.None, false},
		{protocol.Shared, acceptfilter.Data, true},
	} {
		t.Run(tc.mode.String()+"/"+tc.filter.String(), func(t *testing.T) {
			cfg := fastConfig(tc.mode)
			cfg.Filter, cfg.StartChildren = tc.filter, 1
			p := startPool(t, cfg, "keephttp")
			secs, err := unix.GetsockoptInt(p.fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT)
			if err != nil || (secs > 0) != tc.defers {
				t.Errorf("TCP_DEFER_ACCEPT = %d, %v; want it set: %v", secs, err, tc.defers)
			}
			if body, err := get(p.addr, "/"); err != nil || !strings.HasPrefix(body, "slot=") {
				t.Errorf("request: %q, %v", body, err)
			}
		})
	}
}

// TestStopAnswersHeld: a pool told to stop under an accept filter loses no
// connection. What its master holds is answered (a request finished after
// the stop); what it did not accept waits in the socket's queue, which a
// copy of the socket (systemd's, in production) keeps, for the next pool.
// Only idle connections are closed, as a server closes idle connections: a
// parked keep-alive connection between two requests, and a silent one.
// (The master used to close everything it held at once: a reset for each
// client whose request was in.)
func TestStopAnswersHeld(t *testing.T) {
	cfg := fastConfig(protocol.Dispatch)
	cfg.MinChildren, cfg.MaxChildren, cfg.StartChildren, cfg.MinSpare, cfg.MaxSpare = 2, 2, 2, 0, 2
	// Long timeouts: a connection kept past the stop would hold the pool
	// beyond the 15 s that p.stop waits.
	cfg.Filter, cfg.HoldTimeout, cfg.GracefulTimeout = acceptfilter.HTTP, time.Minute, time.Minute
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	socket := dupListener(t, ln) // systemd's copy
	ln.Close()
	defer unix.Close(socket)
	listener := func() int {
		fd, err := unix.FcntlInt(uintptr(socket), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fd
	}
	p := startPoolOn(t, cfg, "keephttp", listener(), ln.Addr().String(), "ACTD_TEST_DELAY=300ms")
	eventually(t, "two idle children", func() bool { return snapshot(t, p).Idle == 2 })

	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(20 * time.Second))
		return c, bufio.NewReader(c)
	}
	held := func(want int) func() bool {
		return func() bool { h := snapshot(t, p).Held; return h.Held-h.Ready-h.Parked == want }
	}
	silent, _ := dial()
	// TCP_DEFER_ACCEPT brings a silent connection to the master a second
	// or more late.
	eventually(t, "the silent connection held", held(1))
	idle, idleReader := dial()
	idle.Write([]byte("GET /keep HTTP/1.1\r\n\r\n"))
	if _, err := readAnswer(idleReader); err != nil {
		t.Fatalf("keep-alive request: %v", err)
	}
	eventually(t, "the keep-alive connection parked", func() bool { return snapshot(t, p).Held.Parked == 1 })
	partial, partialReader := dial()
	partial.Write([]byte("GET /partial HTTP/1.0\r\n"))
	eventually(t, "the partial request held", held(2))

	const slow = 6
	answers := make(chan string, slow)
	for i := range slow {
		go func() { body, err := get(p.addr, fmt.Sprintf("/slow/%d", i)); answers <- fmt.Sprint(body, err) }()
	}
	eventually(t, "both children busy", func() bool { return snapshot(t, p).Busy == 2 })

	p.cancel()
	eventually(t, "the stop has begun", func() bool { return snapshot(t, p).Stopping })
	partial.Write([]byte("\r\n"))
	if body, err := readAnswer(partialReader); err != nil || !strings.HasSuffix(body, " /partial\n") {
		t.Errorf("request finished after the stop: %q, %v; want its answer", body, err)
	}
	if got, err := idleReader.ReadString('\n'); err != io.EOF {
		t.Errorf("parked idle connection: read %q, %v; want EOF (closed)", got, err)
	}
	var b [1]byte
	if n, err := silent.Read(b[:]); err != io.EOF {
		t.Errorf("silent connection: read %d bytes, %v; want EOF (closed)", n, err)
	}
	p.stop(t)
	startPoolOn(t, cfg, "keephttp", listener(), p.addr, "ACTD_TEST_DELAY=300ms") // the restart
	for range slow {
		if got := <-answers; !strings.HasPrefix(got, "slot=") || !strings.Contains(got, " /slow/") {
			t.Errorf("request sent before the stop: %q, want its answer", got)
		}
	}
}
