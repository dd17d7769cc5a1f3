package prefork_test

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/prefork/worker"
	"github.com/actd/actd/protocol"
)

// leaked is what the leak worker keeps: never freed, every page touched.
var leaked [][]byte

// leak wraps h so that every request keeps ACTD_TEST_LEAK more bytes.
func leak(h worker.Handler) worker.Handler {
	n, _ := strconv.Atoi(os.Getenv("ACTD_TEST_LEAK"))
	return func(c net.Conn) {
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		leaked = append(leaked, b)
		h(c)
	}
}

// TestRecycleByMemory: children that keep 4 MB per request are drained and
// replaced once over --max-child-memory, and no request fails; the
// snapshot shows each child's memory and CPU time.
func TestRecycleByMemory(t *testing.T) {
	for _, mode := range []protocol.Mode{protocol.Dispatch, protocol.Exclusive} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := fastConfig(mode)
			cfg.MaxChildren = 3
			cfg.MaxChildMemory = 48 << 20
			p := startPool(t, cfg, "leak", "ACTD_TEST_LEAK="+strconv.Itoa(4<<20))
			var maxSeen uint64
			for i := range 80 {
				line := "req" + strconv.Itoa(i)
				ans, err := request(p.addr, line)
				if err != nil || !strings.HasSuffix(ans, line) {
					t.Fatalf("request %d: got %q, %v, want an answer ending %q", i, ans, err, line)
				}
				for _, sl := range snapshot(t, p).Slots {
					maxSeen = max(maxSeen, sl.Memory)
				}
				time.Sleep(20 * time.Millisecond) // a tick or so between requests
			}
			snap := snapshot(t, p)
			if snap.Stats.MemRecycled == 0 {
				t.Errorf("got 0 children recycled by memory after 80 requests of 4 MB, want some (largest seen %d bytes)", maxSeen)
			}
			if maxSeen < 16<<20 {
				t.Errorf("got at most %d bytes of memory in any slot, want the leak to show (16 MB or more)", maxSeen)
			}
			eventually(t, "every live child shows its memory", func() bool {
				for _, sl := range snapshot(t, p).Slots {
					if sl.Memory == 0 {
						return false
					}
				}
				return true
			})
		})
	}
}

// TestKillAfterServingReplacedAtOnce: a child killed by a SIGKILL the
// master did not send, after it served, is replaced at once (the scale
// period here is a minute) and does not start a failure streak, even when
// it dies young (the second kill, well within a second of its start): an
// OOM kill is no start failure.
func TestKillAfterServingReplacedAtOnce(t *testing.T) {
	cfg := fastConfig(protocol.Dispatch)
	cfg.ScalePeriod = time.Minute
	cfg.StartChildren, cfg.MinSpare = 1, 0
	p := startPool(t, cfg, "echo")
	// The first scale runs at the first tick (PingTimeout/2 after the
	// start); the next a minute later.
	time.Sleep(time.Second)
	pid := 0
	for kill := 1; kill <= 2; kill++ {
		ans, err := request(p.addr, "before")
		if err != nil {
			t.Fatal(err)
		}
		if childPID(t, ans) == pid {
			t.Fatalf("kill %d: got an answer from pid %d, killed before, want a new child", kill, pid)
		}
		pid = childPID(t, ans)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a new child replaces the killed one", func() bool {
			s := snapshot(t, p)
			return s.Stats.Respawned == uint64(kill) && s.Idle == 1
		})
		if s := snapshot(t, p); s.Failures != 0 {
			t.Errorf("kill %d: got %d start failures, want 0: the child had served (last exit %q)", kill, s.Failures, s.LastExit)
		}
	}
}

// childPID returns P of an echo answer "slot=K pid=P line".
func childPID(t *testing.T, ans string) int {
	t.Helper()
	for _, f := range strings.Fields(ans) {
		if v, ok := strings.CutPrefix(f, "pid="); ok {
			pid, err := strconv.Atoi(v)
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no pid in answer %q", ans)
	return 0
}
