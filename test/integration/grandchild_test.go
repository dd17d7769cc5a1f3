//go:build integration

package integration

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// spawningWorker is the Python example worker whose first connection (of
// any child: the first to create /run/actd/grandchild) starts a grandchild
// that is given the listener on purpose (pass_fds, as a program that
// clears close-on-exec would have it) and accepts on it, answering nothing:
// issue 22 finding 9. Every child serves one connection
// (max-conn-per-child = 1), so the one that started it is soon reaped.
const spawningWorker = `#!/usr/bin/python3
import os, subprocess, sys
sys.path.insert(0, "/usr/local/lib/actd-leak")
import worker
HOLE = """
import select, socket
s = socket.socket(fileno=3)  # non-blocking, as the master set it: wait, then accept
held = []
while True:
    select.select([s], [], [])
    try:
        held.append(s.accept())
    except BlockingIOError:
        pass
"""
serve = worker.serve
def spawning(conn):
    try:
        fd = os.open("/run/actd/grandchild", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return serve(conn)
    hole = subprocess.Popen([sys.executable, "-c", HOLE], pass_fds=(3,))
    os.write(fd, b"%d\n" % hole.pid)
    os.close(fd)
    serve(conn)
worker.serve = spawning
worker.main()
`

// TestGrandchildKilledWithChild is issue 22 item 4 under a real systemd:
// with the unit's cgroup delegated (Delegate=yes) a child starts a
// grandchild that holds the listener and accepts on it; when actd reaps the
// child it kills the grandchild, which sat in the child's slot-N leaf
// (journal: ACTD_EVENT=orphans), and then 12 of 12 good clients are
// answered: none is swallowed by the grandchild.
func TestGrandchildKilledWithChild(t *testing.T) {
	requireTool(t, "python3", "python3")
	a := NewActdBox(t)
	installLeakyWorker(t, a) // the example worker, which spawningWorker imports
	a.WriteFile("/usr/local/bin/spawning-worker", []byte(spawningWorker), 0o755)
	pool := Pool{Port: freePort(t),
		Config:  "worker = /usr/local/bin/spawning-worker\nstart-children = 2\nmin-children = 2\nmax-children = 4\nmax-conn-per-child = 1\n",
		Service: delegateDropIn}
	a.SetUp(pool)
	a.Activate(pool.Addr(), serviceUnit)

	pid, err := strconv.Atoi(strings.TrimSpace(a.ReadFile("/run/actd/grandchild")))
	if err != nil {
		t.Fatalf("/run/actd/grandchild: %v\n%s", err, a.Journal(serviceUnit))
	}
	gone := false
	for deadline := time.Now().Add(30 * time.Second); !gone && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		stat, err := a.RunErr("cat", fmt.Sprintf("/proc/%d/stat", pid))
		gone = err != nil || strings.Contains(stat, ") Z ")
	}
	if !gone {
		t.Fatalf("grandchild %d still runs 30 s after its child served its one connection\n%s", pid, a.Journal(serviceUnit))
	}
	answered := 0
	for range 12 {
		if _, err := get(pool.Addr(), 5*time.Second); err == nil {
			answered++
		}
	}
	events := a.eventCounts(serviceUnit)
	t.Logf("grandchild %d gone; %d of 12 good clients answered; journal by event: %v", pid, answered, events)
	if answered != 12 {
		t.Errorf("good clients: got %d of 12 answered, want 12", answered)
	}
	if events["orphans"] < 1 {
		t.Errorf("journal: got no ACTD_EVENT=orphans line, want one for the grandchild\n%s", a.Journal(serviceUnit))
	}
}
