package examples_test

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Load per case, bounded in count and time.
const (
	sequential    = 20                    // light load: one request at a time...
	sequentialGap = 20 * time.Millisecond // ...with this pause between them
	// strays is how many sequential requests may reach another child than
	// the hot one: on a loaded machine a child may not be back in its wait
	// when the next request comes (a net/http server closes the connection
	// after the client has its answer). Spread over idle children, 20
	// requests would give 2 of them about 10 each.
	strays         = 2
	concurrent     = 10 // clients at once...
	perClient      = 10 // ...each sending this many requests
	requestTimeout = 10 * time.Second
)

// answerRE matches both workers' answers.
var answerRE = regexp.MustCompile(`^(\S+) slot=(\d+) pid=(\d+)`)

// TestWorkersUnderActd runs each example worker under a real actd in
// dispatch and exclusive mode, and in dispatch mode under the http accept
// filter (connections handed over): every request is answered, light sequential
// load stays on one child, `actd status` counts what was served, and
// SIGTERM stops actd with status 0 and no child left behind.
func TestWorkersUnderActd(t *testing.T) {
	bin := t.TempDir()
	actd := build(t, bin, "github.com/actd/actd/cmd/actd")
	goWorker := build(t, bin, "github.com/actd/actd/examples/go-worker")
	goHTTP := build(t, bin, "github.com/actd/actd/examples/go-http")
	script, err := filepath.Abs("python-worker/worker.py")
	if err != nil {
		t.Fatal(err)
	}
	rev1, err := filepath.Abs("testdata/worker-rev1.py")
	if err != nil {
		t.Fatal(err)
	}
	python, err := exec.LookPath("python3")
	noPython := ""
	if err != nil {
		noPython = "python3 not found (Debian package python3): the Python worker needs it"
	}
	workers := []struct {
		name string   // what the worker calls itself in its answers
		argv []string // the COMMAND after --
		ps   []string // how its processes show in ps, to find leftovers
		skip string
		rev1 bool // speaks protocol revision 1 only: no hand-off, so no accept filter
	}{
		{"go-worker", []string{goWorker}, []string{"go-worker"}, "", false},
		{"go-http", []string{goHTTP}, []string{"go-http"}, "", false},
		{"python-worker", []string{python, script}, []string{"worker.py", "python3"}, noPython, false},
		{"python-worker-rev1", []string{python, rev1}, []string{"worker-rev1.py", "python3"}, noPython, true},
	}
	for _, w := range workers {
		t.Run(w.name+"/exclusive-recycled", func(t *testing.T) {
			if w.skip != "" {
				t.Skip(w.skip)
			}
			checkRecycledStaysHot(t, actd, w.argv)
		})
		for _, mode := range []string{"dispatch", "exclusive", "dispatch+http"} {
			if w.rev1 && strings.Contains(mode, "+") {
				continue // actd refuses it there with exit 78 (cmd/actd TestAcceptFilterNeedsHandoff)
			}
			t.Run(w.name+"/"+mode, func(t *testing.T) {
				if w.skip != "" {
					t.Skip(w.skip)
				}
				accept, filter, _ := strings.Cut(mode, "+") // +http: the master holds and hands over (C)
				var flags []string
				if filter != "" {
					flags = []string{"--accept-filter", filter}
				}
				p := startPool(t, actd, accept, w.argv, flags...)
				client := &http.Client{Timeout: requestTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
				seen := map[int]int{} // pid → requests it answered
				hot := checkSequential(t, p, client, w.name, seen)
				checkConcurrent(t, p, client, w.name, seen)
				checkServed(t, p, hot, sequential+concurrent*perClient)
				checkStop(t, p, seen, w.ps)
			})
		}
	}
}

// checkRecycledStaysHot: in exclusive mode with --max-conn-per-child, the
// hot child is recycled again and again. A replacement registers behind the
// children already running; once it has, those register anew behind it when
// it has the lower slot, so the lowest slot is hot again. Sequential
// requests sent while every child is idle must go to the lowest slot, served
// by several processes in turn.
func checkRecycledStaysHot(t *testing.T, actd string, worker []string) {
	const requests, limit = 40, 8
	p := startPool(t, actd, "exclusive", worker, "--max-conn-per-child", strconv.Itoa(limit),
		"--start-children", "3", "--min-spare", "3", "--max-spare", "3", "--scale-period", "50ms")
	client := &http.Client{Timeout: requestTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	lowest, hot := 0, map[int]bool{} // requests the lowest slot answered; PIDs that did
	var misses []string
	for i := range requests {
		low := waitAllIdle(t, p)
		a, err := get(client, p.addr, fmt.Sprintf("/recycled/%d", i))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if a.slot == low {
			lowest++
			hot[a.pid] = true
		} else {
			misses = append(misses, fmt.Sprintf("request %d: slot %d, lowest %d", i, a.slot, low))
		}
	}
	if lowest < requests*9/10 || len(hot) < 3 {
		t.Errorf("%d sequential requests with --max-conn-per-child %d: %d by the lowest slot, in %d processes; want at least %d, in at least 3 (%v)",
			requests, limit, lowest, len(hot), requests*9/10, misses)
	}
}

// waitAllIdle waits until every child is idle (registered, in exclusive
// mode), as `actd status` shows it, and returns the lowest slot.
func waitAllIdle(t *testing.T, p *pool) int {
	t.Helper()
	doc, err := p.WaitStatus(func(d statusDoc) bool { return len(d.Pool.Slots) > 0 && allIdle(d) })
	if err != nil || len(doc.Pool.Slots) == 0 || !allIdle(doc) {
		t.Fatalf("children not all idle within %v: %+v, %v", readyBound, doc.Pool.Slots, err)
	}
	return doc.Pool.Slots[0].Slot
}

func allIdle(doc statusDoc) bool {
	for _, s := range doc.Pool.Slots {
		if s.State != "I" {
			return false
		}
	}
	return true
}

// answer is one worker reply.
type answer struct {
	worker    string
	slot, pid int
}

// get sends one request and parses the answer.
func get(client *http.Client, addr, path string) (answer, error) {
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("GET %s: %w", path, err)
	}
	m := answerRE.FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		return answer{}, fmt.Errorf("GET %s: got %s %q, want 200 and \"NAME slot=K pid=P\"", path, resp.Status, body)
	}
	slot, _ := strconv.Atoi(string(m[2]))
	pid, _ := strconv.Atoi(string(m[3]))
	return answer{worker: string(m[1]), slot: slot, pid: pid}, nil
}

// checkSequential sends requests one at a time with a pause between them:
// with an idle child always at hand, the same (lowest idle, or first
// registered) child must take them all. It returns that child's PID.
func checkSequential(t *testing.T, p *pool, client *http.Client, worker string, seen map[int]int) int {
	t.Helper()
	served := map[int]int{}
	for i := range sequential {
		a, err := get(client, p.addr, fmt.Sprintf("/seq/%d", i))
		if err != nil {
			t.Fatalf("sequential request %d: %v", i, err)
		}
		if a.worker != worker {
			t.Fatalf("sequential request %d: answered by %q, want %q", i, a.worker, worker)
		}
		served[a.pid]++
		seen[a.pid]++
		time.Sleep(sequentialGap)
	}
	hot := 0
	for pid, n := range served {
		if hot == 0 || n > served[hot] {
			hot = pid
		}
	}
	if served[hot] < sequential-strays {
		t.Errorf("%d sequential requests: got %d served by the hot child (pid → count %v), want all but at most %d", sequential, served[hot], served, strays)
	}
	return hot
}

// checkConcurrent sends concurrent×perClient requests from concurrent
// clients at once; every one must be answered.
func checkConcurrent(t *testing.T, p *pool, client *http.Client, worker string, seen map[int]int) {
	t.Helper()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for c := range concurrent {
		wg.Go(func() {
			for i := range perClient {
				a, err := get(client, p.addr, fmt.Sprintf("/burst/%d/%d", c, i))
				if err == nil && a.worker != worker {
					err = fmt.Errorf("answered by %q, want %q", a.worker, worker)
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					seen[a.pid]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Errorf("concurrent request: %v", err)
	}
	if len(errs) > 0 {
		t.Fatalf("concurrent: got %d of %d requests answered, want all", concurrent*perClient-len(errs), concurrent*perClient)
	}
	t.Logf("concurrent: %d requests answered by %d children", concurrent*perClient, len(seen))
}

// checkServed waits until `actd status --json` counts want connections
// served (children report busy before they answer, but the master may read
// the reports after the client has its answer), and checks that the hot
// child's slot counts the sequential ones.
func checkServed(t *testing.T, p *pool, hot int, want uint64) {
	t.Helper()
	doc, err := p.WaitStatus(func(d statusDoc) bool { return d.Pool.Stats.Served >= want })
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if got := doc.Pool.Stats.Served; got != want {
		t.Errorf("status: got %d served, want %d", got, want)
	}
	for _, s := range doc.Pool.Slots {
		if s.PID == hot && s.Served < sequential-strays {
			t.Errorf("status: slot %d (pid %d) got %d served, want at least the %d sequential requests it answered", s.Slot, s.PID, s.Served, sequential-strays)
		}
	}
}

// checkStop sends SIGTERM: actd must exit 0 and leave no worker behind, of
// those in its last status and those that answered requests. Its log must
// show no complaint: the workers obeyed every order, drains included, and
// none had to be killed.
func checkStop(t *testing.T, p *pool, seen map[int]int, ps []string) {
	t.Helper()
	doc, err := p.Status()
	if err != nil {
		t.Fatalf("status before stop: %v", err)
	}
	var pids []int
	for _, s := range doc.Pool.Slots {
		pids = append(pids, s.PID)
	}
	for pid := range seen {
		pids = append(pids, pid)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("SIGTERM: got %v, want exit status 0", err)
	}
	for _, left := range leftBehind(pids, ps...) {
		t.Errorf("after actd exited: %s still exists", left)
	}
	lines, err := p.complaints()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		t.Errorf("actd log: got %s, want no complaint", line)
	}
}
