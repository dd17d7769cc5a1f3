package perl_test

import (
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// preloadDoc is what `actd status --json` prints.
type preloadDoc = statusDoc

// TestPreload: under --preload the handler's zygote loads the application
// (30 MB made at load) and the children are forked from it: they answer
// with the zygote's PID as the loader, are the master's own children, and
// their PSS is well below their RSS. A zygote killed from outside is
// replaced while its children serve on; a reload brings a new zygote whose
// children serve the new generation.
func TestPreload(t *testing.T) {
	p := startPool(t, "dispatch", "preload.psgi", "--preload", "--start-children", "3", "--min-spare", "3", "--start-timeout", "60s")
	doc := p.WaitZygote(t, func(d preloadDoc) bool { return d.Pool.Zygote != nil && d.IdleOf(1) == 3 })
	first := doc.Pool.Zygote.PID
	for _, sl := range doc.Pool.Slots {
		if ppid := pooltest.ParentOf(t, sl.PID); ppid != p.Cmd.Process.Pid {
			t.Errorf("child %d: parent %d, want the master %d", sl.PID, ppid, p.Cmd.Process.Pid)
		}
		rss, pss := pooltest.MemoryOf(t, sl.PID)
		if pss >= rss*6/10 {
			t.Errorf("child %d: PSS %d kB of RSS %d kB, want well below: pages shared with the zygote", sl.PID, pss, rss)
		}
	}
	if loaded := loadedBy(t, p); loaded != first {
		t.Errorf("application loaded by %d, want the zygote %d", loaded, first)
	}

	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if loaded := loadedBy(t, p); loaded != first {
		t.Errorf("after the zygote's death: served by a child loaded by %d, want %d", loaded, first)
	}
	second := p.WaitZygote(t, func(d preloadDoc) bool {
		return d.Pool.Zygote != nil && d.Pool.Zygote.State == "ready" && d.Pool.Zygote.PID != first
	}).Pool.Zygote.PID

	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	third := p.WaitZygote(t, func(d preloadDoc) bool {
		return d.Pool.Zygote != nil && d.Pool.Zygote.Generation == 2 && d.Pool.Zygote.State == "ready" &&
			d.IdleOf(2) == 3 && len(d.Pool.Slots) == 3
	}).Pool.Zygote.PID
	if third == second {
		t.Errorf("generation 2's zygote %d, want a new one", third)
	}
	if loaded := loadedBy(t, p); loaded != third {
		t.Errorf("after the reload: served by a child loaded by %d, want the new zygote %d", loaded, third)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// loadedBy asks the application which process loaded it.
func loadedBy(t *testing.T, p *pool) int {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var loaded int
	if _, err := fmt.Sscanf(string(body), "loaded %d", &loaded); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return loaded
}
