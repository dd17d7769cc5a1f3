package worker

import (
	"errors"
	"testing"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// TestTallySends: under a revision-6 master the first request goes out at
// once in a Tally, the next ones wait for a second after it (or the exit's
// flush), and counting one allocates nothing; under revision 5, Tally
// sends nothing.
func TestTallySends(t *testing.T) {
	for _, tc := range []struct {
		revision string
		sends    bool
	}{{"6", true}, {"5", false}} {
		t.Run("revision "+tc.revision, func(t *testing.T) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fds[0])
			defer unix.Close(fds[1])
			t.Setenv(protocol.EnvProtocol, tc.revision)
			tallying.Store(nil)
			startTally(channel(fds[1]))
			defer tallying.Store(nil)
			Tally(200, 3*time.Millisecond)
			wait := 5 * time.Second // a bound, not a speed: the first goes at once
			if !tc.sends {
				wait = 100 * time.Millisecond
			}
			got := readTally(t, fds[0], wait)
			if !tc.sends {
				if got != nil {
					t.Fatalf("revision 5: got a Tally %+v, want none", got)
				}
				return
			}
			if got == nil || got.Codes[0] != 1 || got.Count() != 1 {
				t.Fatalf("first Tally = %+v, want one 200", got)
			}
			if allocs := testing.AllocsPerRun(100, func() { Tally(404, time.Millisecond) }); allocs != 0 {
				t.Errorf("Tally allocates %v times per call, want 0", allocs)
			}
			if early := readTally(t, fds[0], 0); early != nil {
				t.Errorf("a second Tally at once: %+v, want none within a second of the first", early)
			}
			flushTally()
			got = readTally(t, fds[0], 5*time.Second)
			if got == nil || got.Codes[9] != 101 || got.Count() != 101 { // 404: TallyCodes[9]; AllocsPerRun runs once more
				t.Errorf("flushed Tally = %+v, want 101 × 404", got)
			}
		})
	}
}

// readTally reads one packet from fd within wait (0: only one already
// there), and returns its Tallies, or nil if none came.
func readTally(t *testing.T, fd int, wait time.Duration) *protocol.Tallies {
	t.Helper()
	tv := unix.NsecToTimeval(max(wait, time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	var buf [protocol.MaxPacket]byte
	n, err := unix.Read(fd, buf[:])
	if errors.Is(err, unix.EAGAIN) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.Decode(buf[:n])
	if err != nil || m.Type != protocol.Tally {
		t.Fatalf("got %+v, %v; want a Tally", m, err)
	}
	return m.Tallies
}
