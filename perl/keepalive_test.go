package perl_test

import (
	"bufio"
	"io"
	"testing"

	"github.com/actd/actd/protocol"
)

// TestKeepAliveOrders: a child that accepts by itself (exclusive mode)
// hears the master while it waits for the next request of a kept-alive
// connection, and keeps the client: a "register again" (A) is carried out
// once the connection ends (I for the connection, then I once registered
// again: the slot's movingBusy, moving, idle in prefork/machine.go), a
// ping (P) is answered at once (O); a drain (D) still ends the connection,
// and the child. The master sends A to a child it holds idle, which may
// have accepted a connection whose B the master has not read yet: a
// client of that connection must not lose its next request (the flake of
// TestEdgeTwoListeners, keep-alive under exclusive mode). The test plays
// the master over the child's back-channel (a real SOCK_SEQPACKET pair
// and a real listener), so that the orders come while the child waits.
func TestKeepAliveOrders(t *testing.T) {
	needPlack(t)
	accept := protocol.Message{Type: protocol.Accept}
	ping := protocol.Message{Type: protocol.Ping, Value: 7}
	for _, tc := range []struct {
		name   string
		orders []protocol.Message // sent while the child waits for the client
		heard  string             // what the child says meanwhile, requests (R) left out
		served bool               // the client's next request is answered
		after  string             // what the child says once the connection ended
	}{
		{"register again", []protocol.Message{accept, ping}, "O", true, "I I"},
		{"ping", []protocol.Message{ping}, "O", true, "I"},
		{"drain", []protocol.Message{{Type: protocol.Drain}}, "", false, "I"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startWorkerWith(t, "H1", "ACTD_ACCEPT_MODE=exclusive", "ACTD_PROTOCOL=4")
			w.send(t, accept) // the go-ahead
			w.expect(t, "I")
			conn := dialSend(t, w.addr, keepAliveRequest)
			r := bufio.NewReader(conn)
			if err := readAnswer(r, 200); err != nil {
				t.Fatalf("first request: %v", err)
			}
			w.expect(t, "B0")
			for _, m := range tc.orders {
				w.send(t, m)
			}
			if tc.heard != "" {
				w.expect(t, tc.heard)
			}
			if tc.served {
				write(t, conn, closeRequest)
				if err := readAnswer(r, 200); err != nil {
					t.Errorf("next request on the kept-alive connection: %v, want 200", err)
				}
			} else if n, err := r.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("after a drain: got %d bytes, %v, want end of file", n, err)
			}
			w.expect(t, tc.after)
			if tc.served { // still accepting, registered
				next := dialSend(t, w.addr, closeRequest)
				w.expect(t, "B0 I")
				readHello(t, next)
			}
		})
	}
}
