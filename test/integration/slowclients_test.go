//go:build integration

package integration

import (
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actd/actd/internal/slowclient"
)

// heldLine matches what STATUS= adds under an accept filter.
var heldLine = regexp.MustCompile(`; held (\d+) \((\d+) ready, (\d+) parked\)`)

// TestSlowClientsDefaultPool: the default pool as the package ships it
// (accept-filter = http in actd.conf) holds 300 connections that send a
// header byte a second and 64 silent ones in its master, while a client
// loop runs: every good request is answered by a child that accepted it
// itself (children first: nothing handed over by the master), no child is
// pinned (the pool stays far below max-children), STATUS= and actd status
// show the held connections, and a request that never completes gets 408
// after the hold timeout.
func TestSlowClientsDefaultPool(t *testing.T) {
	a := NewActdBox(t)
	pool := Pool{Port: freePort(t)}
	a.SetUp(pool)
	a.Activate(pool.Addr(), serviceUnit)
	if conf := a.ReadFile(configPath); !strings.Contains(conf, "\naccept-filter = http\n") {
		t.Fatalf("%s as shipped: no line accept-filter = http", configPath)
	}

	partial, err := net.DialTimeout("tcp", pool.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	io.WriteString(partial, "GET / HTTP/1.1\r\nHost: actd\r\n")
	sent := time.Now()

	stop := make(chan struct{})
	trickle := holdSlowClients(t, pool.Addr(), 300, 64, stop)
	defer func() { close(stop); trickle.Wait() }()
	n := waitHeld(t, a, 365)
	t.Logf("held %d connections", n)

	load := StartLoad(pool.Addr(), 4, 10*time.Millisecond, 30*time.Second)
	waitAnswered(t, load, 200, 20*time.Second)
	res := load.Stop()
	if len(res.Answers) == 0 || res.Failed > 0 || res.Refused > 0 {
		t.Errorf("good clients beside the slow ones: %v; want every request answered", res)
	}
	line := a.WaitPoolLine(serviceUnit, 5*time.Second, "a pool line", func([]int) bool { return true })
	if line[poolTotal] >= line[poolMax] {
		t.Errorf("pool line %v: %d children of max %d; want the slow clients to pin none", line, line[poolTotal], line[poolMax])
	}
	out, err := a.RunErr(actdBinary, "status")
	if err != nil || !strings.Contains(out, "held (accept filter http): ") {
		t.Errorf("actd status: %v, want a held line:\n%s", err, out)
	}
	// The built-in handler screens (children first): the good requests
	// never reached the master, and no slow one became ready.
	if !regexp.MustCompile(`; \d+ held in all, 0 handed over,`).MatchString(out) {
		t.Errorf("actd status: want the good requests served by the children alone (0 handed over):\n%s", out)
	}

	partial.SetReadDeadline(sent.Add(30 * time.Second))
	answer, _ := io.ReadAll(partial)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 408 Request Timeout\r\n") {
		t.Errorf("a request that never completes: got %q after %v, want 408 after the hold timeout (10s)", answer, time.Since(sent).Round(time.Second))
	}
}

// holdSlowClients opens slow connections to addr that send the start of a
// request and then a header byte a second, and silent ones; all stay open
// until the test ends, the trickle until stop closes.
func holdSlowClients(t *testing.T, addr string, slow, silent int, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	conns, err := slowclient.Open(addr, slow, silent, 1, 5*time.Second)
	t.Cleanup(conns.Close)
	if err != nil {
		t.Fatalf("slow clients: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { conns.Trickle(time.Second, stop) })
	return &wg
}

// waitHeld waits until STATUS= shows at least want held connections and
// returns the number.
func waitHeld(t *testing.T, a *ActdBox, want int) int {
	t.Helper()
	held := 0
	waitService(t, a.Bus, serviceUnit, 15*time.Second, fmt.Sprintf("holding %d connections", want), func(s ServiceState) bool {
		if m := heldLine.FindStringSubmatch(s.StatusText); m != nil {
			held, _ = strconv.Atoi(m[1])
		}
		return held >= want
	})
	return held
}
