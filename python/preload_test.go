package python_test

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// preloadFlags start a preloaded pool of four; the start timeout is long
// because a loaded shared machine can take many seconds to import Python.
var preloadFlags = []string{"--preload", "--start-children", "4", "--min-spare", "4", "--start-timeout", "60s"}

// zygoteDoc is what `actd status --json` prints.
type zygoteDoc = statusDoc

// TestPreloadSharesPages: under --preload the children are forked from a
// zygote that imported the application (30 MB made at import): each
// answers with the zygote's PID as the importer, is the master's own child
// (reparented through the double fork), and its PSS is well below its RSS;
// the status shows the zygote's RSS, the 30 MB included.
// Without --preload each child imports the application itself.
func TestPreloadSharesPages(t *testing.T) {
	py := python(t)
	for _, tc := range []struct {
		name    string
		flags   []string
		preload bool
	}{
		{"preload", preloadFlags, true},
		{"exec", preloadFlags[1:], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPool(t, "dispatch", []string{py, "-m", "actd.wsgi", "preloadapp:app"}, tc.flags...)
			doc := p.WaitZygote(t, func(d zygoteDoc) bool { return d.IdleOf(1) == 4 })
			zpid := 0
			if tc.preload {
				zpid = doc.Pool.Zygote.PID
				if z := doc.Pool.Zygote; z.Memory < 30<<20 { // status reads the zygote's RSS
					t.Errorf("zygote memory_bytes %d, want at least the 30 MB the application made", z.Memory)
				}
			} else if doc.Pool.Zygote != nil {
				t.Fatalf("got zygote %+v without --preload, want none", *doc.Pool.Zygote)
			}
			for _, sl := range doc.Pool.Slots {
				t.Run(strconv.Itoa(sl.PID), func(t *testing.T) {
					if ppid := pooltest.ParentOf(t, sl.PID); ppid != p.Cmd.Process.Pid {
						t.Errorf("child %d: parent %d, want the master %d", sl.PID, ppid, p.Cmd.Process.Pid)
					}
					rss, pss := pooltest.MemoryOf(t, sl.PID)
					t.Logf("child %d: RSS %d kB, PSS %d kB", sl.PID, rss, pss)
					if shared := pss < rss*6/10; shared != tc.preload {
						t.Errorf("child %d: PSS %d kB of RSS %d kB: shared %v, want %v", sl.PID, pss, rss, shared, tc.preload)
					}
				})
			}
			imported, _ := p.whoServes(t)
			if tc.preload && imported != zpid {
				t.Errorf("application imported by %d, want the zygote %d", imported, zpid)
			}
			if err := p.Stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
}

// TestPreloadZygoteReplaced: a zygote killed from outside does not stop
// the pool: the children it forked serve on, a new zygote starts, and the
// children forked later come from it. A reload gives the new generation a
// new zygote, whose forks serve it.
func TestPreloadZygoteReplaced(t *testing.T) {
	py := python(t)
	p := startPool(t, "dispatch", []string{py, "-m", "actd.wsgi", "preloadapp:app"}, preloadFlags...)
	first := p.WaitZygote(t, func(d zygoteDoc) bool { return d.IdleOf(1) == 4 }).Pool.Zygote.PID
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if imported, _ := p.whoServes(t); imported != first {
		t.Errorf("after the zygote's death: served by a child imported by %d, want the first zygote %d", imported, first)
	}
	second := p.WaitZygote(t, func(d zygoteDoc) bool {
		return d.Pool.Zygote.State == "ready" && d.Pool.Zygote.PID != first
	}).Pool.Zygote
	if second.Restarts != 1 {
		t.Errorf("restarts %d, want 1", second.Restarts)
	}
	p.waitLog(t, "zygote died")

	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	doc := p.WaitZygote(t, func(d zygoteDoc) bool {
		return d.Pool.Generation == 2 && d.Pool.Zygote.Generation == 2 && d.Pool.Zygote.State == "ready" &&
			d.IdleOf(2) == 4 && len(d.Pool.Slots) == 4
	})
	third := doc.Pool.Zygote.PID
	if third == second.PID || third == first {
		t.Errorf("generation 2's zygote %d, want a new one (had %d, %d)", third, first, second.PID)
	}
	if imported, _ := p.whoServes(t); imported != third {
		t.Errorf("after the reload: served by a child imported by %d, want the new zygote %d", imported, third)
	}
	if err := syscall.Kill(second.PID, 0); err == nil {
		t.Errorf("the old generation's zygote %d still runs after the reload", second.PID)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// whoServes asks the application which process imported it and which
// serves.
func (p *pool) whoServes(t *testing.T) (imported, served int) {
	t.Helper()
	replies, err := exchange(p.addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if err != nil || len(replies) != 1 || replies[0].status != 200 {
		t.Fatalf("GET /: %v, %+v", err, replies)
	}
	if _, err := fmt.Sscanf(replies[0].body, "imported %d served %d", &imported, &served); err != nil {
		t.Fatalf("body %q: %v", replies[0].body, err)
	}
	return imported, served
}
