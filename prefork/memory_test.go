package prefork_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/prefork"
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
// request after one that left it over the limit. Each answer carries the
// child's own RSS, which only grows, so a child's answers sorted by it are
// in the order it served them; it may run ahead of the master's reading by
// a few hundred KB (the kernel's RSS counters are per CPU, and read
// approximately), hence the slack. With 8 clients on at most 3 children the
// pool is saturated and the master orders KeepAccepting, a batch of up to
// 32 connections, to children with room for a batch only. The tick alone
// let them serve dozens more.
func TestMemoryReadAtConnectionEnd(t *testing.T) {
	const limit, slack = 40 << 20, 1 << 20
	for _, tc := range []struct {
		name    string
		clients int
	}{{"one client", 1}, {"saturated", 8}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fastConfig(protocol.Dispatch)
			cfg.MaxChildren, cfg.StartChildren = 3, 2
			cfg.MaxChildMemory = limit
			cfg.PingInterval = 5 * time.Second // ticks a second apart while the pool is quiet
			p := startPool(t, cfg, "leak", "ACTD_TEST_LEAK="+strconv.Itoa(4<<20))
			byPID := map[uint64][]uint64{} // RSS after each request, by child
			var mu sync.Mutex
			var wg sync.WaitGroup
			for c := range tc.clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 160 / tc.clients {
						line := fmt.Sprintf("client%d-req%d", c, i)
						ans, err := request(p.addr, line)
						if err != nil || !strings.HasSuffix(ans, line) {
							t.Errorf("request %s: got %q, %v, want an answer ending %q", line, ans, err, line)
							return
						}
						mu.Lock()
						pid := answerField(ans, "pid")
						byPID[pid] = append(byPID[pid], answerField(ans, "rss"))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			beyond, crossed := 0, 0
			for pid, rss := range byPID {
				slices.Sort(rss)
				for i, r := range rss {
					switch {
					case i > 0 && rss[i-1] > limit+slack:
						beyond++
						t.Logf("pid %d: served a request while over the limit, now %d bytes", pid, r)
					case r > limit+slack:
						crossed++
					}
				}
			}
			snap := snapshot(t, p)
			t.Logf("%d children, %d crossed the limit, %d requests served beyond it, %d recycled by memory, %d KeepAccepting orders",
				len(byPID), crossed, beyond, snap.Stats.MemRecycled, snap.Stats.KeepOrders)
			// The limit must have been met: children that answered over it,
			// or (when a child's own RSS reading, taken before its answer
			// left, was still under it) children the master recycled for it.
			if crossed < 3 && snap.Stats.MemRecycled < 3 {
				t.Errorf("got %d children crossing the limit and %d recycled by memory in 160 requests of 4 MB, want at least 3",
					crossed, snap.Stats.MemRecycled)
			}
			if beyond != 0 {
				t.Errorf("got %d requests served by children already over --max-child-memory, want 0", beyond)
			}
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
	// start); the next a minute later. A tick measures every live child
	// (memory.go), and nothing else does without --max-child-memory: a
	// child's memory in a snapshot says the first tick, scale and all, ran.
	eventually(t, "the first tick: a child's memory measured", func() bool {
		return slices.ContainsFunc(snapshot(t, p).Slots, func(s prefork.SlotInfo) bool { return s.Memory > 0 })
	})
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
