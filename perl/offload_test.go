package perl_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// TestOffload runs the handler under --accept-filter http with 2 children
// (docs/perl.md, "Slow readers: write completion"), listening on a unix
// socket: 8 clients read t/offload.psgi's 1 MiB response (a one-element
// array body, or a file handle) at 256 KiB/s. The children hand each to
// the master (W) and are free again: a status shows the master sending
// and no child busy, a good client is answered while no slow one has
// finished, every slow client gets exactly the bytes, and actd's log has
// no complaint (the checks are pooltest.CheckOffload's).
func TestOffload(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "http.sock")
	p := startPoolAt(t, "unix:"+sock, sock, nil, "dispatch", "offload.psgi", "--accept-filter", "http",
		"--start-children", "2", "--min-children", "2", "--max-children", "2", "--hold-timeout", "60s")
	pooltest.CheckOffload(t, p.Proc, sock, func(conn net.Conn, r *bufio.Reader) error {
		return echoRoundTrip(conn, r, "/echo?good")
	}, p.complaints)
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
