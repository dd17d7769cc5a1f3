package prefork

import "time"

// Crash backoff bounds.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 30 * time.Second
	// youngAge: a child that dies on its own before this age, or before
	// it said hello, counts as a start failure.
	youngAge = time.Second
	// provenAge: a child that said hello (or, in shared mode, runs) and is
	// still alive at this age proves the worker starts.
	provenAge = 2 * time.Second
)

// backoff spaces out spawns while the worker program keeps failing: after n
// failures in a row the next start waits backoffBase·2^(n-1), at most
// backoffMax, and only one child is started at a time.
type backoff struct {
	failures  int
	notBefore time.Time
	lastFail  time.Time
	lastExit  string
}

func (b *backoff) fail(now time.Time, exit string) {
	b.failures++
	b.lastFail = now
	b.lastExit = exit
	b.notBefore = now.Add(b.delay())
}

func (b *backoff) delay() time.Duration {
	if b.failures == 0 {
		return 0
	}
	return min(backoffBase<<min(b.failures-1, 20), backoffMax)
}

// allows returns how many of want spawns may happen now.
func (b *backoff) allows(now time.Time, want int) int {
	switch {
	case b.failures == 0:
		return want
	case now.Before(b.notBefore):
		return 0
	}
	return min(want, 1)
}

// spawned notes a start while failing: the next waits a full delay.
func (b *backoff) spawned(now time.Time) {
	if b.failures > 0 {
		b.notBefore = now.Add(b.delay())
	}
}

// ok ends a failure streak: the worker program proved it starts.
func (b *backoff) ok() { *b = backoff{} }

// proves reports whether a child started at started and alive at now ends
// the streak: it started after the last failure and lived provenAge.
func (b *backoff) proves(started, now time.Time) bool {
	return b.failures > 0 && started.After(b.lastFail) && now.Sub(started) >= provenAge
}
