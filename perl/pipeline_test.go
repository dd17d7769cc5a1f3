package perl_test

import (
	"bufio"
	"fmt"
	"io"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// TestPipelined runs the handler under --accept-filter http with 2
// children (docs/protocol.md, "Accept filters: pipelined and partial next
// requests", Actd::Exact): connections whose next request has begun but
// is not whole pin no child, and a pipelined burst is answered in order
// (pooltest.Echo's checks).
func TestPipelined(t *testing.T) {
	p := startPool(t, "dispatch", "app.psgi", "--accept-filter", "http", "--start-children", "2",
		"--min-children", "2", "--max-children", "2", "--hold-timeout", "60s")
	t.Run("partial next requests pin no child", func(t *testing.T) {
		echoApp.CheckPartialNext(t, p.Proc, p.addr, func() error {
			conn, r := dial(t, p)
			if _, err := io.WriteString(conn, echo("good", "")); err != nil {
				return err
			}
			return expectEcho(r, "good")
		})
	})
	t.Run("pipelined burst", func(t *testing.T) { echoApp.CheckBurst(t, p.addr, 0) })
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// echoApp is app.psgi's /echo, which answers with the request's body.
var echoApp = pooltest.Echo{Request: echo, Expect: expectEcho}

// echo is a request to app.psgi's /echo with body, which the answer
// carries back; extra is more header fields.
func echo(body, extra string) string {
	return fmt.Sprintf("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n%s", len(body), extra, body)
}

// expectEcho reads one answer of app.psgi's /echo from r, want its body.
func expectEcho(r *bufio.Reader, want string) error {
	return pooltest.ExpectAnswer(r, "POST", want)
}
