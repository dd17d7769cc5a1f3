package python_test

import (
	"bufio"
	"net"
	"path/filepath"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// TestOffload runs the adapter under --accept-filter http with 2 children
// (docs/python.md, "Write completion"), listening on a unix socket: 8
// clients read testdata/offloadapp.py's 1 MiB response (a one-element
// body, or a wsgi.file_wrapper's file) at 256 KiB/s. The children hand
// each to the master (W) and are free again: a status shows the master
// sending and no child busy, a good client is answered while no slow one
// has finished, and every slow client gets exactly the bytes (the checks
// are pooltest.CheckOffload's).
func TestOffload(t *testing.T) {
	py := python(t)
	sock := filepath.Join(t.TempDir(), "http.sock")
	args := append([]string{"--listen", "unix:" + sock, "--accept", "dispatch"}, filterFlags...)
	p := startActd(t, sock, append(args, "--", py, "-m", "actd.wsgi", "offloadapp:app")...)
	pooltest.CheckOffload(t, p.Proc, sock, func(conn net.Conn, r *bufio.Reader) error {
		return roundTrip(conn, r, "/echo?good")
	}, nil)
}
