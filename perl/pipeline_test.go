package perl_test

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

// TestPipelined runs the handler under --accept-filter http with 2
// children (docs/protocol.md, "Accept filters: pipelined and partial next
// requests", Actd::Exact): connections whose next request has begun but
// is not whole pin no child, and a pipelined burst is answered in order.
func TestPipelined(t *testing.T) {
	p := startPool(t, "dispatch", "app.psgi", "--accept-filter", "http", "--start-children", "2",
		"--min-children", "2", "--max-children", "2", "--hold-timeout", "60s")
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
	conn, r := dial(t, p)
	if _, err := io.WriteString(conn, echo("good", "")); err != nil {
		t.Fatal(err)
	}
	if err := expectEcho(r, "good"); err != nil {
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

// echo is a request to app.psgi's /echo with body, which the answer
// carries back; extra is more header fields.
func echo(body, extra string) string {
	return fmt.Sprintf("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n%s", len(body), extra, body)
}

// partialNext sends a request and the start of the next on one
// connection, reads the first answer (then calls first), trickles the rest
// of the next one, and reads its answer.
func partialNext(addr string, i int, first func()) error {
	once := sync.OnceFunc(first)
	defer once()
	conn, err := net.DialTimeout("tcp", addr, ioBound)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	next := echo(fmt.Sprintf("b%d", i), "Connection: close\r\n")
	if _, err := io.WriteString(conn, echo(fmt.Sprintf("a%d", i), "")+next[:10]); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	if err := expectEcho(r, fmt.Sprintf("a%d", i)); err != nil {
		return fmt.Errorf("first answer: %w", err)
	}
	once()
	for j := 10; j < len(next); j++ {
		time.Sleep(100 * time.Millisecond)
		if _, err := conn.Write([]byte{next[j]}); err != nil {
			return err
		}
	}
	if err := expectEcho(r, fmt.Sprintf("b%d", i)); err != nil {
		return fmt.Errorf("second answer: %w", err)
	}
	return nil
}

// expectEcho reads one answer of app.psgi's /echo from r, want its body.
func expectEcho(r *bufio.Reader, want string) error {
	resp, err := http.ReadResponse(r, &http.Request{Method: "POST"})
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

// checkBurst: 10 requests sent at once on one connection are all
// answered, in order.
func checkBurst(t *testing.T, p *pool) {
	conn, r := dial(t, p)
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var burst strings.Builder
	for i := range 10 {
		burst.WriteString(echo(fmt.Sprint(i), ""))
	}
	if _, err := io.WriteString(conn, burst.String()); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := expectEcho(r, fmt.Sprint(i)); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
	}
}
