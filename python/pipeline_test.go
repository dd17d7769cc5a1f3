package python_test

import (
	"bufio"
	"fmt"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// TestPipelined runs the adapter under --accept-filter http with 2
// children (docs/protocol.md, "Accept filters: pipelined and partial next
// requests", actd.exact): connections whose next request has begun but
// is not whole pin no child, and a pipelined burst is answered in order
// (pooltest.Echo's checks).
func TestPipelined(t *testing.T) {
	py := python(t)
	p := startPool(t, "dispatch", []string{py, "-m", "actd.wsgi", "validated:app"}, filterFlags...)
	t.Run("partial next requests pin no child", func(t *testing.T) {
		echoApp.CheckPartialNext(t, p.Proc, p.addr, func() error {
			conn, err := dial(p.addr)
			if err != nil {
				return err
			}
			defer conn.Close()
			return roundTrip(conn, bufio.NewReader(conn), "/echo?good")
		})
	})
	t.Run("pipelined burst", func(t *testing.T) { echoApp.CheckBurst(t, p.addr, 0) })
	if err := p.Stop(); err != nil {
		t.Errorf("SIGTERM: got %v, want exit status 0", err)
	}
}

// echoApp is validated.py's /echo?query, which answers "GET /echo query ".
var echoApp = pooltest.Echo{
	Request: func(query, extra string) string {
		return fmt.Sprintf("GET /echo?%s HTTP/1.1\r\nHost: x\r\n%s\r\n", query, extra)
	},
	Expect: expectEcho,
}

// expectEcho reads one answer of validated.py's /echo?query from r.
func expectEcho(r *bufio.Reader, query string) error {
	return pooltest.ExpectAnswer(r, "GET", "GET /echo "+query+" ")
}
