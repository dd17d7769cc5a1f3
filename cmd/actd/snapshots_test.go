package main

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actd/actd/prefork"
)

// TestSnapshotsShared: concurrent readers share one snapshot; a reader
// after it has been taken gets a fresh one, no sooner than snapshotEvery
// after the previous one started.
func TestSnapshotsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var starts []time.Time
		s := &snapshots{every: snapshotEvery, take: func(context.Context) (prefork.Snapshot, error) {
			starts = append(starts, time.Now())
			<-release
			return prefork.Snapshot{Taken: time.Now()}, nil
		}}
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				if _, err := s.get(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait() // every reader waits on the one snapshot in flight
		close(release)
		wg.Wait()
		if got := s.taken.Load(); got != 1 {
			t.Errorf("got %d snapshots for 100 concurrent readers, want 1", got)
		}
		if _, err := s.get(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := s.taken.Load(); got != 2 {
			t.Errorf("got %d snapshots after a later reader, want 2", got)
		}
		if gap := starts[1].Sub(starts[0]); gap < snapshotEvery {
			t.Errorf("got %v between two snapshots, want at least %v", gap, snapshotEvery)
		}
	})
}

// TestSnapshotsReaderGivesUp: a reader whose context ends does not wait for
// a snapshot the master loop does not answer.
func TestSnapshotsReaderGivesUp(t *testing.T) {
	s := &snapshots{every: time.Second, take: func(ctx context.Context) (prefork.Snapshot, error) {
		<-ctx.Done()
		return prefork.Snapshot{}, ctx.Err()
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := s.get(ctx); err != context.DeadlineExceeded {
		t.Errorf("got %v, want %v", err, context.DeadlineExceeded)
	}
}
