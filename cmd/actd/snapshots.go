package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actd/actd/prefork"
)

// snapshotEvery bounds how often the status and metrics readers make the
// master loop take a snapshot: a flood of them costs it at most one
// snapshot per period, while a lone reader still gets one taken after it
// asked.
const snapshotEvery = 20 * time.Millisecond

// snapshots shares pool snapshots among concurrent readers: a reader joins
// the snapshot being taken (or waiting for its turn), or starts one, which
// waits until every has passed since the previous one started.
type snapshots struct {
	take  func(context.Context) (prefork.Snapshot, error) // Pool.Snapshot
	every time.Duration
	taken atomic.Uint64 // snapshots taken, for tests

	mu        sync.Mutex
	lastStart time.Time
	flight    *flight // the snapshot being taken or waiting its turn, or nil
}

// flight is one snapshot for every reader that joined it; done closes when
// snap and err are set.
type flight struct {
	done chan struct{}
	snap prefork.Snapshot
	err  error
}

// get returns a snapshot taken after the first reader of its flight asked.
// It returns the error of that snapshot (the loop did not answer in 2s,
// ErrStopped), or ctx.Err() if ctx ends first. Callers must not modify the
// snapshot's slices: other readers share them.
func (s *snapshots) get(ctx context.Context) (prefork.Snapshot, error) {
	s.mu.Lock()
	f := s.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		s.flight = f
		go s.fill(f, time.Until(s.lastStart.Add(s.every)))
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.snap, f.err
	case <-ctx.Done():
		return prefork.Snapshot{}, ctx.Err()
	}
}

// fill waits wait, then takes the snapshot of f, bounded by 2s whoever
// waits for it.
func (s *snapshots) fill(f *flight, wait time.Duration) {
	if wait > 0 {
		time.Sleep(wait)
	}
	s.mu.Lock()
	s.lastStart = time.Now()
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	f.snap, f.err = s.take(ctx)
	s.taken.Add(1)
	s.mu.Lock()
	s.flight = nil
	s.mu.Unlock()
	close(f.done)
}
