//go:build integration

package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHeldConnectionsOutliveMaster (issue 22 item 1): the shipped pool
// (accept-filter = http) holds parked keep-alive connections and partial
// requests in its master, which keeps them in systemd's fd store. The
// master dies without a drain (SIGKILL; or SIGSTOP, then the watchdog), the
// clients send their next request, or the rest of their request, while no
// master runs; the restarted master takes the connections back from the
// store and every request is answered on its own connection.
// docs/operations.md ("When the master dies") states this.
func TestHeldConnectionsOutliveMaster(t *testing.T) {
	const parked, partial = 20, 10
	for _, tc := range []struct {
		name    string
		service string
		signal  string
		result  string // Service.Result the property watch must see
	}{
		{"sigkill", "", "SIGKILL", "signal"},
		{"watchdog", "WatchdogSec=3s\n", "SIGSTOP", "watchdog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewActdBox(t)
			pool := Pool{Port: freePort(t), Service: tc.service}
			a.SetUp(pool)
			watch := a.Watch(serviceUnit)
			before := a.Activate(pool.Addr(), serviceUnit)

			keep := make([]*client, parked)
			for i := range keep {
				keep[i] = dialClient(t, pool.Addr())
				keep[i].send(t, fmt.Sprintf("GET /first/%d HTTP/1.1\r\nHost: actd\r\n\r\n", i))
				if err := keep[i].answer(); err != nil {
					t.Fatalf("parked connection %d, first request: %v", i, err)
				}
			}
			half := make([]*client, partial)
			for i := range half {
				half[i] = dialClient(t, pool.Addr())
				half[i].send(t, fmt.Sprintf("GET /half/%d HTTP/1.1\r\nHost: actd\r\n", i))
			}
			held := waitHeld(t, a, parked+partial)
			t.Logf("held %d connections before the %s", held, tc.signal)

			a.Run("systemctl", "kill", "--kill-who=main", "--signal="+tc.signal, serviceUnit)
			for i, c := range keep {
				c.send(t, fmt.Sprintf("GET /second/%d HTTP/1.1\r\nHost: actd\r\n\r\n", i))
			}
			for _, c := range half {
				c.send(t, "\r\n")
			}
			waitService(t, a.Bus, serviceUnit, 30*time.Second, "restarted", func(s ServiceState) bool {
				return s.ActiveState == "active" && s.NRestarts >= 1 && s.MainPID != before.MainPID
			})
			answered := 0
			for i, c := range append(keep, half...) {
				if err := c.answer(); err != nil {
					t.Errorf("connection %d, request sent while no master ran: %v; want it answered by the restarted master", i, err)
					continue
				}
				answered++
			}
			t.Logf("%s: %d of %d held and parked connections answered after the restart", tc.name, answered, parked+partial)
			if st := serviceState(t, a.Bus, serviceUnit); st.NRestarts != 1 {
				t.Errorf("NRestarts: got %d, want 1", st.NRestarts)
			}
			requireSaw(t, watch, "Service.Result", tc.result)
			journal := a.Journal(serviceUnit)
			if !strings.Contains(journal, "took back held connections from the store") {
				t.Errorf("journal: no line saying the restarted master took back held connections")
			}
			for _, bad := range []string{"FileDescriptorStoreMax", "fd store", "Failed to add fd"} {
				if strings.Contains(journal, bad) {
					t.Errorf("journal: systemd complains about the fd store (%q):\n%s", bad, journal)
				}
			}
		})
	}
}

// client is one keep-alive HTTP connection.
type client struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialClient connects to addr; the connection is closed when t ends.
func dialClient(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(60 * time.Second))
	return &client{conn: c, r: bufio.NewReader(c)}
}

// send writes s.
func (c *client) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		t.Fatalf("send %q: %v", s, err)
	}
}

// answer reads one answer and returns an error unless it is the built-in
// handler's 200.
func (c *client) answer() error {
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK || answerPattern.Find(body) == nil {
		return fmt.Errorf("got %s %q, want 200 and slot=K pid=P", resp.Status, body)
	}
	return nil
}
