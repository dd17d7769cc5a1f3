//go:build integration

package integration

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// leakyWorker is the Python example worker made to keep 20 MB per request
// (pages written, so they are resident), as a leaking application does;
// with LEAK_SLOT=N in its environment only the child of slot N leaks.
const leakyWorker = `#!/usr/bin/python3
import os, sys
sys.path.insert(0, "/usr/local/lib/actd-leak")
import worker
kept = []
serve = worker.serve
def leaky(conn):
    kept.append(b"\x01" * (20 << 20))
    serve(conn)
if os.environ.get("LEAK_SLOT", worker.SLOT) == worker.SLOT:
    worker.serve = leaky
worker.main()
`

// TestOOMKilledChildrenReplaced is issue 15's OOM scenario: a worker that
// keeps 20 MB per request, 8 children under MemoryMax=200M, 16 clients.
// The kernel OOM-kills children over and over; each is replaced at once
// (no backoff: it had served), the journal says oom, the pool never has
// zero children while connections wait, and the unit survives.
func TestOOMKilledChildrenReplaced(t *testing.T) {
	requireTool(t, "python3", "python3")
	a := NewActdBoxWith(t, BoxConfig{Memory: true})
	installLeakyWorker(t, a)
	pool := Pool{Port: freePort(t),
		Config:  "worker = /usr/local/bin/leaky-worker\nmax-children = 8\nstart-children = 4\n",
		Service: "MemoryMax=200M\n"}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)

	load := StartLoad(pool.Addr(), 16, 0, 20*time.Second)
	samples, ooms := a.watchPool(t, 3, 60*time.Second)
	// Still serving after the kills. Under memory pressure each request is
	// slow (the kernel reclaims before every allocation): a count, no rate.
	waitAnswered(t, load, 10, 60*time.Second)
	res := load.Stop()
	t.Logf("client loop: %v; %d OOM kills in the journal; %d status samples", res, ooms, len(samples))
	t.Logf("journal, by event: %v", a.eventCounts(serviceUnit))

	if ooms < 3 {
		t.Errorf("journal: got %d ACTD_EVENT=oom lines, want at least 3:\n%s", ooms, a.Journal(serviceUnit))
	}
	for _, s := range samples {
		if s.Queue > 0 && s.Children == 0 {
			t.Errorf("status at %v: got 0 children with %d connections waiting (failures %d, retry in %v), want a child", s.Taken, s.Queue, s.Failures, s.RetryIn)
		}
	}
	after := serviceState(t, a.Bus, serviceUnit)
	if after.ActiveState != "active" || after.MainPID != before.MainPID || after.NRestarts != 0 {
		t.Errorf("unit: got %s, PID %d, %d restarts, want active, PID %d, 0 restarts", after.ActiveState, after.MainPID, after.NRestarts, before.MainPID)
	}
}

// installLeakyWorker copies the Python example worker and leakyWorker into a.
func installLeakyWorker(t *testing.T, a *ActdBox) {
	t.Helper()
	src, err := os.ReadFile("../../examples/python-worker/worker.py")
	if err != nil {
		t.Fatal(err)
	}
	a.Run("mkdir", "-p", "/usr/local/lib/actd-leak")
	a.WriteFile("/usr/local/lib/actd-leak/worker.py", src, 0o644)
	a.WriteFile("/usr/local/bin/leaky-worker", []byte(leakyWorker), 0o755)
}

// poolSample is what `actd status --json` says of the pool at one moment.
type poolSample struct {
	Children int           `json:"children"`
	Queue    int           `json:"queue"`
	Failures int           `json:"failures"`
	RetryIn  time.Duration `json:"retry_in"`
	Taken    time.Time     `json:"taken"`
}

// watchPool reads the pool's status every 100 ms until the journal has
// ooms ACTD_EVENT=oom lines (then 3 s more) or timeout passes, and returns
// the samples and the count of oom lines.
func (a *ActdBox) watchPool(t *testing.T, ooms int, timeout time.Duration) ([]poolSample, int) {
	t.Helper()
	var samples []poolSample
	var until time.Time
	n := 0
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var doc struct {
			Pool poolSample `json:"pool"`
		}
		if out, err := a.RunErr(actdBinary, "status", "--json"); err == nil && json.Unmarshal([]byte(out), &doc) == nil {
			samples = append(samples, doc.Pool)
		}
		if until.IsZero() {
			if n = a.countOOM(); n >= ooms {
				until = time.Now().Add(3 * time.Second)
			}
		} else if time.Now().After(until) {
			break
		}
	}
	return samples, a.countOOM()
}

// eventCounts returns how many lines unit logged for each ACTD_EVENT.
func (a *ActdBox) eventCounts(unit string) map[string]int {
	out, _ := a.RunErr("journalctl", "--no-pager", "-o", "export", "-u", unit)
	counts := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if event, ok := strings.CutPrefix(line, "ACTD_EVENT="); ok {
			counts[event]++
		}
	}
	return counts
}

// countOOM returns how many ACTD_EVENT=oom entries actd.service logged.
func (a *ActdBox) countOOM() int {
	out, _ := a.RunErr("journalctl", "--no-pager", "-o", "cat", "-u", serviceUnit, "ACTD_EVENT=oom")
	return strings.Count(out, "OOM killer")
}
