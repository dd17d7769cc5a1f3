package python_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/actd/actd/protocol"
)

// pidRequest asks testdata/validated.py for its pid, keeping the
// connection open.
const pidRequest = "GET /pid HTTP/1.1\r\nHost: t\r\n\r\n"

// TestKeepAliveOrders: a child that accepts by itself (exclusive mode)
// hears the master while it waits for the next request of a kept-alive
// connection (actd.worker's wait_next), and keeps the client: a "register
// again" (A) is carried out once the connection ends (I for the
// connection, then I once registered again: the slot's movingBusy,
// moving, idle in prefork/machine.go), a ping (P) is answered at once
// (O); a drain (D) still ends the connection, and the child, but answers
// a request already in first. The master sends A and P to a child it
// holds idle, which may have accepted a connection whose B it has not
// read yet (the adapter sends B 5 ms into a connection): a client of that
// connection must not lose its next request. With "in", the child is
// stopped (SIGSTOP) while the orders and the next request arrive, so that
// it finds both at once.
func TestKeepAliveOrders(t *testing.T) {
	accept := protocol.Message{Type: protocol.Accept}
	ping := protocol.Message{Type: protocol.Ping, Value: 7}
	drain := protocol.Message{Type: protocol.Drain}
	for _, tc := range []struct {
		name   string
		orders []protocol.Message // sent while the child waits for the client
		in     bool               // the next request arrives with them
		heard  string             // what the child says meanwhile, requests (R) left out
		served bool               // the client's next request is answered
		closes bool               // the child ends the connection (else the client does)
		after  string             // what the child says once the connection ended
	}{
		{"register again", []protocol.Message{accept, ping}, false, "O", true, false, "I I"},
		{"ping", []protocol.Message{ping}, false, "O", true, false, "I"},
		{"drain", []protocol.Message{drain}, false, "", false, true, "I"},
		{"register again, request in", []protocol.Message{accept}, true, "", true, false, "I I"},
		{"ping, request in", []protocol.Message{ping}, true, "O", true, false, "I"},
		{"drain, request in", []protocol.Message{drain}, true, "", true, true, "I"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startChild(t, "H1", "ACTD_ACCEPT_MODE=exclusive")
			c.send(t, accept) // the go-ahead
			c.expect(t, "I")
			conn := dialSend(t, c.addr, pidRequest)
			r := bufio.NewReader(conn)
			if err := readAnswer(r, 200); err != nil {
				t.Fatalf("first request: %v", err)
			}
			c.expect(t, "B0") // it waits for the next request
			if tc.in {
				c.signal(t, syscall.SIGSTOP)
			}
			for _, m := range tc.orders {
				c.send(t, m)
			}
			if tc.in {
				write(t, conn, pidRequest)
				c.signal(t, syscall.SIGCONT)
			}
			if tc.heard != "" {
				c.expect(t, tc.heard)
			}
			if tc.served {
				if !tc.in {
					write(t, conn, pidRequest)
				}
				if err := readAnswer(r, 200); err != nil {
					t.Errorf("next request on the kept-alive connection: %v, want 200", err)
				}
			}
			if !tc.closes {
				conn.Close()
			} else if n, err := r.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("after a drain: got %d bytes, %v, want end of file", n, err)
			}
			c.expect(t, tc.after)
			if !tc.closes { // still accepting, registered
				checkServedOnce(t, c)
			}
		})
	}
}

// checkServedOnce: a new connection to c is answered, and reported as a
// short one (S1) or, on a loaded machine, one that lasted (B0 I).
func checkServedOnce(t *testing.T, c *child) {
	t.Helper()
	conn := dialSend(t, c.addr, "GET /pid HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
	if err := readAnswer(bufio.NewReader(conn), 200); err != nil {
		t.Fatalf("a new connection: %v, want 200", err)
	}
	got := c.next(t, 1)
	if got == "B0" {
		got += " " + c.next(t, 1)
	}
	if got != "S1" && got != "B0 I" {
		t.Errorf("messages for a new connection: got %q, want \"S1\" or \"B0 I\"", got)
	}
}

// readAnswer reads one response from r and wants status.
func readAnswer(r *bufio.Reader, status int) error {
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != status {
		return fmt.Errorf("got status %d, want %d", resp.StatusCode, status)
	}
	return nil
}

// dialSend connects to addr and sends request (nothing if empty); the
// connection is closed at cleanup.
func dialSend(t *testing.T, addr, request string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(ioTimeout))
	write(t, conn, request)
	return conn
}

// write sends s on conn.
func write(t *testing.T, conn net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(conn, s); err != nil {
		t.Fatal(err)
	}
}
