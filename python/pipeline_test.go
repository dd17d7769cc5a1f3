package python_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPipelined runs the adapter under --accept-filter http with 2
// children (docs/protocol.md, "Accept filters: pipelined and partial next
// requests", actd.exact): connections whose next request has begun but
// is not whole pin no child, and a pipelined burst is answered in order.
func TestPipelined(t *testing.T) {
	py := python(t)
	p := startPool(t, "dispatch", []string{py, "-m", "actd.wsgi", "validated:app"}, filterFlags...)
	t.Run("partial next requests pin no child", func(t *testing.T) { checkPartialNext(t, p) })
	t.Run("pipelined burst", func(t *testing.T) { checkBurst(t, p) })
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// checkPartialNext: 8 connections each send a whole request and the start
// of the next, read the first answer, then trickle the rest of the next a
// byte every 100 ms. While they trickle, both children are idle and a
// good client is answered; once complete, every next request is answered.
func checkPartialNext(t *testing.T, p *pool) {
	var answered sync.WaitGroup
	var finished atomic.Int32
	errs := make(chan error, 8)
	answered.Add(8)
	for i := range 8 {
		go func() {
			errs <- partialNext(p.addr, i, answered.Done)
			finished.Add(1)
		}()
	}
	answered.Wait()
	if _, err := p.WaitStatus(func(d statusDoc) bool { return d.Pool.Idle == 2 }); err != nil {
		t.Errorf("want both children idle: %v", err)
	}
	conn, err := dial(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := roundTrip(conn, bufio.NewReader(conn), "/echo?good"); err != nil {
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

// partialNext sends a request and the start of the next on one
// connection, reads the first answer (then calls first), trickles the rest
// of the next one, and reads its answer.
func partialNext(addr string, i int, first func()) error {
	once := sync.OnceFunc(first)
	defer once()
	conn, err := dial(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	next := fmt.Sprintf("GET /echo?b%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", i)
	if _, err := fmt.Fprintf(conn, "GET /echo?a%d HTTP/1.1\r\nHost: x\r\n\r\n%s", i, next[:10]); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	if err := expectEcho(r, fmt.Sprintf("a%d", i)); err != nil {
		return fmt.Errorf("first answer: %w", err)
	}
	once()
	for j := 10; j < len(next); j++ {
		time.Sleep(100 * time.Millisecond) // a client that trickles: the thing tested
		if _, err := conn.Write([]byte{next[j]}); err != nil {
			return err
		}
	}
	if err := expectEcho(r, fmt.Sprintf("b%d", i)); err != nil {
		return fmt.Errorf("second answer: %w", err)
	}
	return nil
}

// expectEcho reads one answer of validated.py's /echo?query from r.
func expectEcho(r *bufio.Reader, query string) error {
	resp, err := http.ReadResponse(r, &http.Request{Method: "GET"})
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "GET /echo " + query + " "; err != nil || resp.StatusCode != 200 || string(body) != want {
		return fmt.Errorf("got %d %q (%v), want 200 %q", resp.StatusCode, body, err, want)
	}
	return nil
}

// checkBurst: 10 requests sent at once on one connection are all
// answered, in order.
func checkBurst(t *testing.T, p *pool) {
	conn, err := dial(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var burst strings.Builder
	for i := range 10 {
		fmt.Fprintf(&burst, "GET /echo?%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
	}
	if _, err := io.WriteString(conn, burst.String()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	for i := range 10 {
		if err := expectEcho(r, fmt.Sprint(i)); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
	}
}
