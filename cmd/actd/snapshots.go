package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actd/actd/prefork"
)

// snapshotMaxAge is how long one pool snapshot answers the status and
// metrics readers: a flood of them costs the master loop one snapshot per
// period.
const snapshotMaxAge = 250 * time.Millisecond

// snapshots shares pool snapshots among concurrent readers: a snapshot
// younger than maxAge is reused, and readers that come while one is being
// taken wait for it instead of taking their own.
type snapshots struct {
	take   func(context.Context) (prefork.Snapshot, error) // Pool.Snapshot
	maxAge time.Duration
	taken  atomic.Uint64 // snapshots taken, for tests

	mu     sync.Mutex
	last   prefork.Snapshot
	at     time.Time // when last was taken; zero before the first
	flight *flight   // the snapshot being taken, or nil
}

// flight is one snapshot being taken; done closes when snap and err are set.
type flight struct {
	done chan struct{}
	snap prefork.Snapshot
	err  error
}

// get returns a snapshot at most maxAge old. It returns the error of the
// snapshot it waited for (the loop did not answer in 2s, ErrStopped), or
// ctx.Err() if ctx ends first. Callers must not modify the snapshot's slices.
func (s *snapshots) get(ctx context.Context) (prefork.Snapshot, error) {
	s.mu.Lock()
	if !s.at.IsZero() && time.Since(s.at) < s.maxAge {
		snap := s.last
		s.mu.Unlock()
		return snap, nil
	}
	f := s.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		s.flight = f
		go s.fill(f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.snap, f.err
	case <-ctx.Done():
		return prefork.Snapshot{}, ctx.Err()
	}
}

// fill takes the snapshot of f, bounded by 2s whoever waits for it.
func (s *snapshots) fill(f *flight) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	f.snap, f.err = s.take(ctx)
	s.taken.Add(1)
	s.mu.Lock()
	s.flight = nil
	if f.err == nil {
		s.last, s.at = f.snap, time.Now()
	}
	s.mu.Unlock()
	close(f.done)
}
