//go:build integration

package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKillBusyChild is scenario 3: SIGKILL to a child busy with a slow
// request under load. Only that child's connection fails; the master stays,
// replaces the child, and every other request is answered.
func TestKillBusyChild(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t), Config: "handler-delay = 2s\nstart-children = 8\nmin-children = 8\n"}
	a.SetUp(pool)
	before := a.Activate(pool.Addr(), serviceUnit)

	load := StartLoad(pool.Addr(), 3, 0, 30*time.Second)
	victim, err := net.DialTimeout("tcp", pool.Addr(), 10*time.Second)
	if err != nil {
		t.Fatalf("victim connection: %v", err)
	}
	defer victim.Close()
	victim.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(victim, "GET / HTTP/1.1\r\nHost: actd\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatalf("victim request: %v", err)
	}
	child := a.connOwner(pool.Port, victim.LocalAddr().(*net.TCPAddr).Port, before.MainPID)
	a.Run("kill", "-KILL", strconv.Itoa(child))
	killedAt := time.Now()
	t.Logf("killed child PID %d while it served the victim connection", child)

	// The killed child's connection is the one that pays: the kernel
	// closes it, there is no answer.
	if resp, err := http.ReadResponse(bufio.NewReader(victim), nil); err == nil {
		body, _ := io.ReadAll(resp.Body)
		t.Errorf("victim connection: got an answer %s %q after its child was killed, want the connection closed", resp.Status, body)
	}
	n := a.WaitPoolLine(serviceUnit, 10*time.Second, "counting the respawn", func(n []int) bool {
		return n[poolRespawned] >= 1
	})
	waitAnswered(t, load, 6, 20*time.Second)
	res := load.Stop()
	t.Logf("client loop: %v; pool line %v", res, n)

	if res.Refused != 0 || res.Failed != 0 {
		t.Errorf("other connections: got %d refused and %d failed %q, want none", res.Refused, res.Failed, res.Errors)
	}
	if res.PIDs(killedAt, time.Now().Add(time.Hour))[child] {
		t.Errorf("killed child PID %d answered after it was killed", child)
	}
	after := serviceState(t, a.Bus, serviceUnit)
	if after.MainPID != before.MainPID || after.NRestarts != 0 {
		t.Errorf("master: got PID %d with NRestarts %d, want PID %d untouched", after.MainPID, after.NRestarts, before.MainPID)
	}
}

// ssPID matches a process in ss -p output: users:(("actd",pid=123,fd=9)).
var ssPID = regexp.MustCompile(`pid=(\d+)`)

// connOwner returns the PID (in the box) of the process other than master
// that holds the server side of the connection from client port cport to
// server port sport, waiting up to 10 s for a child to accept it. It fails
// the test unless exactly one process holds it.
func (a *ActdBox) connOwner(sport, cport int, master uint32) int {
	a.t.Helper()
	requireTool(a.t, "ss", "iproute2")
	filter := fmt.Sprintf("( sport = :%d and dport = :%d )", sport, cport)
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out = a.Run("ss", "-tnpH", "state", "established", filter)
		var pids []int
		for _, m := range ssPID.FindAllStringSubmatch(out, -1) {
			if pid, _ := strconv.Atoi(m[1]); pid != int(master) {
				pids = append(pids, pid)
			}
		}
		switch len(pids) {
		case 0:
			continue
		case 1:
			return pids[0]
		default:
			a.t.Fatalf("connection :%d ← :%d held by several processes %v:\n%s", sport, cport, pids, out)
		}
	}
	a.t.Fatalf("no child accepted the connection :%d ← :%d within 10s; ss says %q", sport, cport, strings.TrimSpace(out))
	return 0
}
