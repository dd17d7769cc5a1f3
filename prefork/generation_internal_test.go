package prefork

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUpCount: a generation's child is up once it said hello and while its
// back-channel is open; one that died (exiting, not reaped yet) is not, or
// a reload into a worker that crashes at start would count its dead as up
// and take over from the generation that serves.
func TestUpCount(t *testing.T) {
	for _, tc := range []struct {
		state state
		want  int
	}{
		{starting, 0},
		{greeted, 0}, // not ready yet
		{idle, 1},
		{busy, 1},
		{exiting, 0},
	} {
		t.Run(tc.state.String(), func(t *testing.T) {
			p, _, _ := dispatchPool(t, 1)
			s := p.slots[0]
			s.gen, s.state = 2, tc.state
			if got := p.upCount(2); got != tc.want {
				t.Errorf("got %d up, want %d", got, tc.want)
			}
		})
	}
}

// TestGenerations: each number is issued once, also past an abandoned
// generation; readyCh answers for the current generation only; a reload's
// generation knows it is one; replaced keeps the generation a reload
// replaced and closes the access-log file of the one before it, unless the
// replaced one still uses that file.
func TestGenerations(t *testing.T) {
	var g generations
	if g.readyCh(1) != nil || g.started() {
		t.Fatalf("before the first: readyCh %v, started %v; want nil, false", g.readyCh(1), g.started())
	}
	deadline := time.Now()
	if n := g.next(2, deadline); n != 1 || g.ready.reload || g.readyCh(1) == nil || g.readyCh(2) != nil {
		t.Fatalf("first: got %d (reload %v), want 1, not a reload, readyCh for 1 only", n, g.ready.reload)
	}
	logA, logB := tempLog(t, "a"), tempLog(t, "b")
	g.replaced(&previous{gen: 1, spec: childSpec{program: Program{logFile: logA}}})
	if n := g.next(2, deadline); n != 2 || !g.ready.reload {
		t.Fatalf("reload: got %d (reload %v), want 2, a reload", n, g.ready.reload)
	}
	g.cur, g.prev = 1, nil // abandon.go: generation 2 abandoned, 1 serves on
	if n := g.next(2, deadline); n != 3 {
		t.Fatalf("after an abandoned one: got %d, want 3", n)
	}
	for _, step := range []struct {
		gen          int
		log          *os.File
		aOpen, bOpen bool
	}{
		{3, logA, true, true}, // nothing replaced before: nothing closed
		{4, logA, true, true}, // the replaced one still uses A
		{5, logB, false, true},
	} {
		g.replaced(&previous{gen: step.gen, spec: childSpec{program: Program{logFile: step.log}}})
		_, errA := logA.Stat()
		_, errB := logB.Stat()
		if (errA == nil) != step.aOpen || (errB == nil) != step.bOpen || g.prev.gen != step.gen {
			t.Errorf("replaced %d: A open %v, B open %v, prev %d; want %v, %v, %d", step.gen, errA == nil, errB == nil, g.prev.gen, step.aOpen, step.bOpen, step.gen)
		}
		if errA != nil && !errors.Is(errA, os.ErrClosed) {
			t.Errorf("replaced %d: A: %v, want closed", step.gen, errA)
		}
	}
}

// tempLog returns an access-log file in t's directory, closed at its end.
func tempLog(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
