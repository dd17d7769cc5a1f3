package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/actd/actd/prefork"
)

// TestSnapshotsShared: concurrent readers share one snapshot; a reader after
// maxAge takes a fresh one.
func TestSnapshotsShared(t *testing.T) {
	release := make(chan struct{})
	s := &snapshots{maxAge: time.Hour, take: func(context.Context) (prefork.Snapshot, error) {
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
	time.Sleep(50 * time.Millisecond) // let the readers pile up on the one in flight
	close(release)
	wg.Wait()
	if _, err := s.get(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.taken.Load(); got != 1 {
		t.Errorf("got %d snapshots for 101 readers within maxAge, want 1", got)
	}
	s.maxAge = 0
	s.get(context.Background())
	if got := s.taken.Load(); got != 2 {
		t.Errorf("got %d snapshots after maxAge, want 2", got)
	}
}

// TestSnapshotsReaderGivesUp: a reader whose context ends does not wait for
// a snapshot the master loop does not answer.
func TestSnapshotsReaderGivesUp(t *testing.T) {
	s := &snapshots{maxAge: time.Second, take: func(ctx context.Context) (prefork.Snapshot, error) {
		<-ctx.Done()
		return prefork.Snapshot{}, ctx.Err()
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := s.get(ctx); err != context.DeadlineExceeded {
		t.Errorf("got %v, want %v", err, context.DeadlineExceeded)
	}
}
