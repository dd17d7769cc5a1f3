package pooltest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The pipelining checks (docs/protocol.md, "Accept filters: pipelined and
// partial next requests"), the same for the built-in handler and every
// language's worker under the http filter.

// Echo is a test app's answer that carries a tag back (tags are numbers,
// as the built-in handler's /bytes/N answers N bytes).
type Echo struct {
	// Request returns a request whose answer carries tag; extra is more
	// header fields, each ending in CRLF.
	Request func(tag, extra string) string
	// Expect reads one answer from r and returns an error unless it is a
	// 200 that carries tag.
	Expect func(r *bufio.Reader, tag string) error
}

// ExpectAnswer reads one answer to a method request from r and returns an
// error unless it is a 200 whose body is want.
func ExpectAnswer(r *bufio.Reader, method, want string) error {
	resp, err := http.ReadResponse(r, &http.Request{Method: method})
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(body) != want {
		return fmt.Errorf("got %d %q (%v), want 200 %q", resp.StatusCode, body, err, want)
	}
	return nil
}

// PartialNext sends, on a new TCP connection to addr, a request (tag 100+i)
// and the first 10 bytes of the next (tag 200+i, Connection: close), reads
// the first answer (then calls first), trickles the rest of the next a
// byte every 100 ms, and reads its answer. It returns the first error,
// naming the answer it concerns; first is called in any case.
func (e Echo) PartialNext(addr string, i int, first func()) error {
	once := sync.OnceFunc(first)
	defer once()
	conn, err := net.DialTimeout("tcp", addr, ioBound)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	next := e.Request(fmt.Sprint(200+i), "Connection: close\r\n")
	if _, err := io.WriteString(conn, e.Request(fmt.Sprint(100+i), "")+next[:10]); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	if err := e.Expect(r, fmt.Sprint(100+i)); err != nil {
		return fmt.Errorf("first answer: %w", err)
	}
	once()
	for j := 10; j < len(next); j++ {
		time.Sleep(100 * time.Millisecond) // a client that trickles: the thing tested
		if _, err := conn.Write([]byte{next[j]}); err != nil {
			return err
		}
	}
	if err := e.Expect(r, fmt.Sprint(200+i)); err != nil {
		return fmt.Errorf("second answer: %w", err)
	}
	return nil
}

// CheckPartialNext: under pool p of 2 children at addr, 8 connections run
// PartialNext. Once each has its first answer, both children are idle (a
// status says so) and good (a good client on a connection of its own)
// returns nil before any trickling connection finished; then every next
// request is answered.
func (e Echo) CheckPartialNext(t *testing.T, p *Proc, addr string, good func() error) {
	t.Helper()
	var answered sync.WaitGroup
	var finished atomic.Int32
	errs := make(chan error, 8)
	answered.Add(8)
	for i := range 8 {
		go func() {
			errs <- e.PartialNext(addr, i, answered.Done)
			finished.Add(1)
		}()
	}
	answered.Wait()
	if _, err := p.WaitStatus(func(d Status) bool { return d.Pool.Idle == 2 }); err != nil {
		t.Errorf("want both children idle: %v", err)
	}
	if err := good(); err != nil {
		t.Errorf("good client: %v", err)
	}
	if n := finished.Load(); n > 0 {
		t.Errorf("%d of 8 trickling connections finished before the children were idle and a good client answered, want 0", n)
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("partial next request: %v", err)
		}
	}
}

// CheckBurst: requests tagged first to first+9, written at once on a new
// TCP connection to addr, are all answered, in order.
func (e Echo) CheckBurst(t *testing.T, addr string, first int) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, ioBound)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var burst strings.Builder
	for i := range 10 {
		burst.WriteString(e.Request(fmt.Sprint(first+i), ""))
	}
	if _, err := io.WriteString(conn, burst.String()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	for i := range 10 {
		if err := e.Expect(r, fmt.Sprint(first+i)); err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
	}
}
