package prefork

import (
	"testing"
	"time"

	"github.com/actd/actd/protocol"
)

// TestFitsFDs: a Write takes two descriptors, Keep, Conn and Fork one,
// any other type none; a lost one counts as what was sent.
func TestFitsFDs(t *testing.T) {
	for _, tc := range []struct {
		typ  protocol.Type
		fds  [2]int
		fits bool
	}{
		{protocol.Write, [2]int{5, 6}, true},
		{protocol.Write, [2]int{5, -1}, false},
		{protocol.Write, [2]int{-1, -1}, false},
		{protocol.Write, [2]int{fdLost, -1}, true},
		{protocol.Keep, [2]int{5, -1}, true},
		{protocol.Keep, [2]int{5, 6}, false},
		{protocol.Keep, [2]int{-1, -1}, false},
		{protocol.Idle, [2]int{-1, -1}, true},
		{protocol.Idle, [2]int{5, -1}, false},
		{protocol.Idle, [2]int{fdLost, -1}, false},
	} {
		if got := fitsFDs(tc.typ, tc.fds); got != tc.fits {
			t.Errorf("%v with %v: got %v, want %v", tc.typ, tc.fds, got, tc.fits)
		}
	}
}

// TestFinishOf: a Write within the largest OffloadMax is taken, with what
// is left and its keep-alive flag; beyond it, or with an absurd offset, it
// is not.
func TestFinishOf(t *testing.T) {
	now := time.Unix(100, 0)
	for _, tc := range []struct {
		name     string
		m        protocol.Message
		ok, keep bool
		off, end int64
	}{
		{"memfd", protocol.Message{Type: protocol.Write, Value: protocol.KeepAlive, Length: 1 << 20}, true, true, 0, 1 << 20},
		{"file part", protocol.Message{Type: protocol.Write, Offset: 4096, Length: 100}, true, false, 4096, 4196},
		{"too long", protocol.Message{Type: protocol.Write, Length: maxOffload + 1}, false, false, 0, 0},
		{"offset past int64", protocol.Message{Type: protocol.Write, Offset: 1 << 63, Length: 1}, false, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := finishOf(tc.m, 7, 8, now)
			if ok != tc.ok || ok && (f.keep != tc.keep || f.off != tc.off || f.end != tc.end || f.size != tc.end-tc.off) {
				t.Errorf("got %+v, %v; want ok %v, keep %v, [%d, %d)", f, ok, tc.ok, tc.keep, tc.off, tc.end)
			}
		})
	}
}

// TestSenderCounts: the sender's fds, bytes and room follow what it holds.
func TestSenderCounts(t *testing.T) {
	var s sender
	f := finishing{fd: 10, data: -1, off: 0, end: 300, size: 300}
	if !s.fits(f, 500) {
		t.Fatalf("an empty sender does not fit 300 of 500")
	}
	i := s.add(f)
	if s.fds() != 2 || s.bytes != 300 || s.left != 300 || s.fits(f, 500) {
		t.Errorf("after one: fds %d, bytes %d, left %d, fits another %v; want 2, 300, 300, false", s.fds(), s.bytes, s.left, s.fits(f, 500))
	}
	if fd := s.release(i); fd != 10 || s.count != 0 || s.bytes != 0 || s.left != 0 {
		t.Errorf("released fd %d, count %d, bytes %d, left %d; want 10, 0, 0, 0", fd, s.count, s.bytes, s.left)
	}
}
