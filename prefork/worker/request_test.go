package worker

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// TestRequestReports: the request in hand goes out (R) once it has run
// busyReportAfter and the master sees the child busy; its end ("") goes out
// only if it was sent; a short request costs no message; nothing goes out
// where the master does not speak revision 2. Fake time (synctest), real
// back-channel; each step's messages are read as the master would.
func TestRequestReports(t *testing.T) {
	long := strings.Repeat("é", protocol.MaxText) // 2 bytes each: cut to MaxText bytes
	tests := []struct {
		name    string
		allowed bool
		run     func(b *lateBusy)
		want    []string // messages the master reads, in order
	}{
		{"dispatch: a long request", true, func(b *lateBusy) {
			b.busyNow(0)
			b.report("GET /slow")
			time.Sleep(2 * busyReportAfter)
			b.report("")
			b.idleNow()
		}, []string{"B", "R GET /slow", "R ", "I"}},
		{"dispatch: a short request", true, func(b *lateBusy) {
			b.busyNow(0)
			b.report("GET /fast")
			time.Sleep(busyReportAfter / 5)
			b.report("")
			b.idleNow()
		}, []string{"B", "I"}},
		{"dispatch: keep-alive, short then long", true, func(b *lateBusy) {
			b.busyNow(0)
			b.report("GET /1")
			b.report("")
			b.report("GET /2")
			time.Sleep(busyRecheck)
			b.idleNow() // the connection ends without a report("")
		}, []string{"B", "R GET /2", "I"}},
		{"exclusive: R waits for B", true, func(b *lateBusy) {
			b.start(1)
			b.report("POST /form")
			time.Sleep(2 * busyRecheck)
			b.report("")
			b.done(true)
		}, []string{"B", "R POST /form", "R ", "I"}},
		{"exclusive: a short connection", true, func(b *lateBusy) {
			b.start(1)
			b.report("GET /")
			b.report("")
			b.done(true)
			b.flush()
		}, []string{"S 1"}},
		{"cut to MaxText", true, func(b *lateBusy) {
			b.busyNow(0)
			b.report(long)
			time.Sleep(2 * busyReportAfter)
			b.idleNow()
		}, []string{"B", "R " + long[:protocol.MaxText], "I"}},
		{"no connection in hand", true, func(b *lateBusy) {
			b.report("GET /nothing")
			time.Sleep(2 * busyReportAfter)
		}, nil},
		{"revision 1 master", false, func(b *lateBusy) {
			b.busyNow(0)
			Report("GET /slow")
			time.Sleep(2 * busyReportAfter)
			b.idleNow()
		}, []string{"B", "I"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer unix.Close(pair[0])
				defer unix.Close(pair[1])
				b := newLateBusy(channel(pair[0]))
				defer b.timer.Stop()
				b.request.allowed = tt.allowed
				tt.run(b)
				synctest.Wait()
				unix.Shutdown(pair[0], unix.SHUT_WR)
				got := readAll(t, pair[1])
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("got %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// readAll reads the child's messages until the end, each as its type's
// letter, with the value of an S and the text of an R.
func readAll(t *testing.T, fd int) []string {
	t.Helper()
	var got []string
	buf := make([]byte, protocol.MaxPacket)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return got
		}
		m, err := protocol.Decode(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		s := string(m.Type)
		switch m.Type {
		case protocol.Served:
			s += fmt.Sprint(" ", m.Value)
		case protocol.Request:
			s += " " + m.Text
		}
		got = append(got, s)
	}
}
