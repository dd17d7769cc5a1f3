package perl_test

import (
	"bufio"
	"net"
	"strings"
	"testing"

	"github.com/actd/actd/internal/pooltest"
	"github.com/actd/actd/protocol"
)

// TestSpellReports: a child that accepts by itself (exclusive mode, and
// the children-first path under --accept-filter http) reports its
// connections in spells, as docs/perl.md says: B for the first, the
// connections waiting behind it served without a B or an I each, then I
// and one S counting them; a request that runs past the spell's 50 ms ends
// it, and the connections after it open the next. Requests are reported
// (R) only between a B and its I, for the first connection of a spell,
// whose text is cleared (an empty R) once a second one is taken. The test
// plays the master over the child's back-channel (a real SOCK_SEQPACKET
// pair and a real listener): the connections are queued before the
// go-ahead (A), so all of them wait when the child registers.
func TestSpellReports(t *testing.T) {
	needPlack(t)
	modes := []struct {
		name  string
		hello string
		env   []string
	}{
		{"exclusive", "H1", []string{"ACTD_ACCEPT_MODE=exclusive", "ACTD_PROTOCOL=4"}},
		{"children first", "H5", []string{"ACTD_PROTOCOL=4", "ACTD_ACCEPT_FILTER=http"}},
	}
	cases := []struct {
		name  string
		paths []string // one Connection: close request each, in accept order
		want  string   // the messages after the go-ahead, requests (R) left out
	}{
		{"short ones", []string{"/hello", "/hello", "/hello", "/hello"}, "I B0 I S3"},
		{"a long one first", []string{"/sleep?ms=200", "/hello", "/hello"}, "I B0 I B0 I S1"},
		{"a long one behind", []string{"/hello", "/sleep?ms=200", "/hello"}, "I B0 I S1 B0 I"},
	}
	for _, m := range modes {
		for _, tc := range cases {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				w := startWorkerWith(t, m.hello, m.env...)
				answers := make(chan error, len(tc.paths))
				var conns []net.Conn
				for _, path := range tc.paths {
					conn := dialSend(t, w.addr, "GET "+path+" HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
					conns = append(conns, conn)
					go func() { answers <- readAnswer(bufio.NewReader(conn), 200) }()
				}
				pooltest.WaitArrived(t, conns...) // every connection queued, its request in
				w.send(t, protocol.Message{Type: protocol.Accept})
				got := w.collect(t, len(strings.Fields(tc.want)))
				if s := withoutRequests(got); s != tc.want {
					t.Errorf("messages: got %q, want %q with requests (R) anywhere between B and I", strings.Join(got, " "), tc.want)
				}
				checkRequestsInBusy(t, got)
				for range tc.paths {
					if err := <-answers; err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
}

// collect reads the child's messages until it has n that are not requests
// (R), and returns all it read.
func (w *worker) collect(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	for others := 0; others < n; {
		m, err := w.receive()
		if err != nil {
			t.Fatalf("messages: got %q, then %v", strings.Join(got, " "), err)
		}
		got = append(got, m)
		if !strings.HasPrefix(m, "R(") {
			others++
		}
	}
	return got
}

// withoutRequests joins the messages that are not requests (R).
func withoutRequests(msgs []string) string {
	var kept []string
	for _, m := range msgs {
		if !strings.HasPrefix(m, "R(") {
			kept = append(kept, m)
		}
	}
	return strings.Join(kept, " ")
}

// checkRequestsInBusy fails t for a request (R) sent while the child was
// idle to the master (before a B, or after its I): the master would
// take it for garbage.
func checkRequestsInBusy(t *testing.T, msgs []string) {
	t.Helper()
	busy := false
	for i, m := range msgs {
		switch {
		case strings.HasPrefix(m, "B"):
			busy = true
		case m == "I":
			busy = false
		case strings.HasPrefix(m, "R(") && !busy:
			t.Errorf("message %d of %q: a request report from an idle child", i, strings.Join(msgs, " "))
		}
	}
}
