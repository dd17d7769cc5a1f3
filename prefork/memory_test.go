package prefork_test

import (
	"bufio"
	"fmt"
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

// leakEcho is echo that keeps ACTD_TEST_LEAK more bytes per request, and
// answers "slot=K pid=P rss=R line" with its resident memory R once it has.
func leakEcho() worker.Handler {
	n, _ := strconv.Atoi(os.Getenv("ACTD_TEST_LEAK"))
	id := "slot=" + os.Getenv(protocol.EnvSlot) + " pid=" + strconv.Itoa(os.Getpid())
	return func(c net.Conn) {
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		leaked = append(leaked, b)
		fmt.Fprintf(c, "%s rss=%d %s", id, selfRSS(), line)
	}
}

// selfRSS returns the calling process's resident memory in bytes, from
// /proc/self/statm (as the master reads it from /proc/PID/stat), or 0.
func selfRSS() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// answerField returns the number after key= in an answer of leakEcho, or 0.
func answerField(ans, key string) uint64 {
	for _, f := range strings.Fields(ans) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}

// TestMemoryReadAtConnectionEnd: children that keep 4 MB per request, sent
// back to back (many per tick), are recycled at the end of the request that
// takes them over --max-child-memory, not a tick later: no child serves a
// request after one that left it over the limit (each answer carries the
// child's own RSS, which may run ahead of the master's reading by a few
// hundred KB: the kernel's RSS counters are per CPU, and read
// approximately; hence the slack). The tick alone let them serve dozens
// more.
func TestMemoryReadAtConnectionEnd(t *testing.T) {
	const limit, slack = 40 << 20, 1 << 20
	cfg := fastConfig(protocol.Dispatch)
	cfg.MaxChildren, cfg.StartChildren = 3, 2
	cfg.MaxChildMemory = limit
	cfg.PingInterval = 5 * time.Second // ticks a second apart while the pool is quiet
	p := startPool(t, cfg, "leak", "ACTD_TEST_LEAK="+strconv.Itoa(4<<20))
	over := map[uint64]bool{} // PIDs whose last answer said over the limit
	beyond, crossed := 0, 0
	for i := range 120 {
		line := "req" + strconv.Itoa(i)
		ans, err := request(p.addr, line)
		if err != nil || !strings.HasSuffix(ans, line) {
			t.Fatalf("request %d: got %q, %v, want an answer ending %q", i, ans, err, line)
		}
		pid, rss := answerField(ans, "pid"), answerField(ans, "rss")
		if over[pid] {
			beyond++
			t.Logf("request %d: pid %d served it while over the limit, now %d bytes", i, pid, rss)
		} else if rss > limit+slack {
			crossed++
		}
		over[pid] = rss > limit+slack
	}
	snap := snapshot(t, p)
	t.Logf("%d children crossed the limit, %d requests served beyond it, %d recycled by memory", crossed, beyond, snap.Stats.MemRecycled)
	if crossed < 3 {
		t.Errorf("got %d children crossing the limit in 120 requests of 4 MB, want at least 3", crossed)
	}
	if beyond != 0 {
		t.Errorf("got %d requests served by children already over --max-child-memory, want 0", beyond)
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
