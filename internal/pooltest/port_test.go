package pooltest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestFreePort: the ports FreePort returns lie below the ephemeral range,
// differ from each other, can be bound, and are reserved (another
// reservation of one fails, here as in another process) until the test
// that took it ends.
func TestFreePort(t *testing.T) {
	low, err := ephemeralLow()
	if err != nil || low <= 1024+portSpan {
		t.Skipf("no room below the ephemeral range (first port %d, %v): FreePort binds to port 0", low, err)
	}
	dir := filepath.Join(os.TempDir(), "actd-test-ports")
	var taken []int
	t.Run("take", func(t *testing.T) {
		a, b := FreePort(t), FreePort(t)
		taken = []int{a, b}
		for _, port := range taken {
			if port < low-portSpan || port >= low {
				t.Errorf("port %d: want it in %d-%d, below the ephemeral range", port, low-portSpan, low-1)
			}
			if lock, err := reserve(dir, port); err == nil {
				lock.Close()
				t.Errorf("port %d: reserved again while its test runs, want it refused", port)
			}
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				t.Errorf("port %d: %v, want it free to bind", port, err)
				continue
			}
			ln.Close()
		}
		if a == b {
			t.Errorf("got port %d twice, want two ports", a)
		}
	})
	for _, port := range taken {
		lock, err := reserve(dir, port)
		if err != nil {
			t.Errorf("port %d after its test ended: %v, want it free to reserve", port, err)
			continue
		}
		lock.Close()
	}
}
