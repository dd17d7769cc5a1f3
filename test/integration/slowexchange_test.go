//go:build integration

package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actd/actd/internal/slowclient"
)

// exchangeApp is the WSGI application of TestSlowBodiesAndReaders: POST
// /echo answers its body, GET /bytes exchangeSize bytes as one string,
// GET /file the same bytes from a file through wsgi.file_wrapper, and GET
// / the built-in handler's line (so Activate and StartLoad know it). The
// bytes are the SHA-256 digests of 0, 1, 2... as 4-byte big-endian
// numbers, one after the other (exchangeBody).
var exchangeApp = slowclient.App("6 << 20", `b"".join(hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(SIZE // 32))`)

// The slow clients: exchangeSlow of each kind, every one lasting about
// exchangeWindow. A slow body is 128 KiB at 8 KiB/s; a slow reader takes
// a 6 MiB answer (more than loopback TCP buffers between a writer and a
// reader that does not read) at 384 KiB/s.
const (
	exchangeSlow   = 32
	exchangeSize   = 6 << 20
	exchangeWindow = 16 * time.Second
	slowBodySize   = 128 << 10
)

// exchangeBody is the application's 6 MiB.
func exchangeBody() []byte {
	b := make([]byte, 0, exchangeSize)
	var n [4]byte
	for i := range exchangeSize / 32 {
		binary.BigEndian.PutUint32(n[:], uint32(i))
		sum := sha256.Sum256(n[:])
		b = append(b, sum[:]...)
	}
	return b
}

// TestSlowBodiesAndReaders (issue 21): the default pool as the packages
// ship it (actd.conf's accept-filter = http, --hold-body and
// --offload-max at their defaults) running a WSGI application through
// python3-actd, with 32 clients sending a 128 KiB body at 8 KiB/s and 32
// reading a 6 MiB answer (half one string, half a file) at 384 KiB/s, as
// many as max-children. A good client beside them has every request
// answered, the master holds the bodies and finishes the answers (actd
// status), and every slow client gets exactly its bytes: the body echoed,
// the answer's checksum.
func TestSlowBodiesAndReaders(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import hashlib, tempfile").Run(); err != nil {
		t.Skipf("skipping: Debian's python3 needed for the WSGI application: %v", err)
	}
	a := NewActdBox(t)
	a.InstallPackage(pythonPackage)
	a.WriteFile("/srv/slow/app.py", []byte(exchangeApp), 0o644)
	a.Run("chmod", "0755", "/srv/slow")
	shipped := a.ReadFile(configPath)
	if !strings.Contains(shipped, "\naccept-filter = http\n") {
		t.Fatalf("%s as shipped: no line accept-filter = http", configPath)
	}
	pool := Pool{Port: freePort(t), Config: shipped + "worker = /usr/bin/python3 -m actd.wsgi --chdir /srv/slow app:app\n"}
	a.SetUp(pool)
	a.Activate(pool.Addr(), serviceUnit)

	want := sha256.Sum256(exchangeBody())
	errs := make(chan error, 2*exchangeSlow)
	var slow sync.WaitGroup
	end := time.Now().Add(exchangeWindow)
	for i := range exchangeSlow {
		slow.Go(func() { errs <- postSlowly(pool.Addr(), i, end) })
		slow.Go(func() { errs <- readSlowly(pool.Addr(), [2]string{"/bytes", "/file"}[i%2], want, end) })
	}

	// The slow clients are in once the master holds bodies and finishes
	// answers; then the good client runs beside them.
	in := a.waitExchangeStatus(t, time.Now().Add(exchangeWindow/2), func(s exchangeSeen) bool { return s.bodies > 0 && s.sending > 0 })
	load := StartLoad(pool.Addr(), 1, 50*time.Millisecond, 5*time.Second)
	seen := a.waitExchangeStatus(t, time.Now().Add(exchangeWindow/4), nil)
	seen = exchangeSeen{max(seen.bodies, in.bodies), max(seen.sending, in.sending)}
	res := load.Stop()
	t.Logf("beside the slow clients: %v; actd status: %d bodies held, %d answers finished by the master at most", res, seen.bodies, seen.sending)
	if len(res.Answers) == 0 || res.Failed > 0 || res.Refused > 0 {
		t.Errorf("good client beside %d slow bodies and %d slow readers: %v; want every request answered", exchangeSlow, exchangeSlow, res)
	}
	if seen.bodies == 0 || seen.sending == 0 {
		t.Errorf("actd status: at most %d bodies held and %d answers finished by the master; want both seen", seen.bodies, seen.sending)
	}

	slow.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// postSlowly sends slow body i (128 KiB, its own bytes) to /echo at 8
// KiB/s and checks the echo, within a minute of end.
func postSlowly(addr string, i int, end time.Time) error {
	body := bytes.Repeat([]byte(fmt.Sprintf("body %02d ", i)), slowBodySize/8)
	if err := slowclient.Post(addr, "/echo", body, slowBodySize/int(exchangeWindow/time.Second), end.Add(time.Minute)); err != nil {
		return fmt.Errorf("slow body %d: %w", i, err)
	}
	return nil
}

// readSlowly reads path's answer whole at 384 KiB/s and checks its
// checksum against want, within a minute of end.
func readSlowly(addr, path string, want [32]byte, end time.Time) error {
	h := sha256.New()
	n, err := slowclient.Read(addr, path, h, exchangeSize/int(exchangeWindow/time.Second), end.Add(time.Minute))
	if err != nil {
		return fmt.Errorf("slow reader of %s: %d bytes: %w", path, n, err)
	}
	if sum := sumOf(h); n != exchangeSize || sum != want {
		return fmt.Errorf("slow reader of %s: got %d bytes, checksum %x; want %d, %x", path, n, sum[:8], exchangeSize, want[:8])
	}
	return nil
}

// sumOf is h's sum as an array.
func sumOf(h hash.Hash) (sum [32]byte) {
	copy(sum[:], h.Sum(nil))
	return sum
}

// exchangeSeen is the most bodies held and answers finished by the master
// that actd status showed at one look.
type exchangeSeen struct{ bodies, sending int }

// waitExchangeStatus looks at `actd status --json` in the box until until,
// or until enough (if not nil) holds for what it has seen, and returns the
// most it saw.
func (a *ActdBox) waitExchangeStatus(t *testing.T, until time.Time, enough func(exchangeSeen) bool) exchangeSeen {
	t.Helper()
	var seen exchangeSeen
	for ; time.Now().Before(until) && (enough == nil || !enough(seen)); time.Sleep(250 * time.Millisecond) {
		out, err := a.RunErr(actdBinary, "status", "--json")
		if err != nil {
			continue
		}
		var st struct {
			Pool struct {
				Held *struct {
					Bodies  int `json:"bodies"`
					Sending int `json:"sending"`
				} `json:"held"`
			} `json:"pool"`
		}
		if json.Unmarshal([]byte(out), &st) == nil && st.Pool.Held != nil {
			seen.bodies, seen.sending = max(seen.bodies, st.Pool.Held.Bodies), max(seen.sending, st.Pool.Held.Sending)
		}
	}
	return seen
}
