package pooltest

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// OffloadSum is the checksum of the write-completion test apps' body of
// size bytes (python/testdata/offloadapp.py, perl/t/offload.psgi): byte i
// is 131*i + i>>10.
func OffloadSum(size int) [32]byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(131*i + i>>10)
	}
	return sha256.Sum256(b)
}

// SlowRead asks for path on a connection to the unix socket sock, reads
// the body at rate bytes a second, and returns its checksum.
func SlowRead(sock, path string, rate int) ([32]byte, error) {
	conn, err := net.DialTimeout("unix", sock, 20*time.Second)
	if err != nil {
		return [32]byte{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	return SlowGet(conn, bufio.NewReader(conn), path, rate)
}

// SlowGet sends a keep-alive GET of path on conn, reads the answer's body
// from r (conn's reader) at rate bytes a second, and returns its checksum,
// or the first write, head or body error (naming path); the connection is
// ready for its next request.
func SlowGet(conn net.Conn, r *bufio.Reader, path string, rate int) ([32]byte, error) {
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		return [32]byte{}, err
	}
	n, err := ContentLength(r)
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
		time.Sleep(time.Duration(chunk) * time.Second / time.Duration(rate)) // a slow reader: the thing tested
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// ContentLength reads a 200 answer's head and returns its Content-Length.
func ContentLength(r *bufio.Reader) (int, error) {
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
