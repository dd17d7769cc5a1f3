package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/actd/actd/activation"
	"github.com/actd/actd/notify"
	"github.com/actd/actd/prefork"
)

// The master keeps the connections it holds under an accept filter in
// systemd's file descriptor store, so that a master that dies without a
// drain loses none of them (prefork/store.go, docs/operations.md "When the
// master dies"). It does so only where the unit allows it: $FDSTORE is the
// unit's FileDescriptorStoreMax=, set by systemd 254 and later, and by
// actd's own units for systemd 252 (Environment=FDSTORE=). Without it a
// store message would only make systemd log a warning per connection.

// envFDStore names the fd store's size, as systemd 254 sets it.
const envFDStore = "FDSTORE"

// errStoreFull is Keep's error when the unit's store is full: the
// connection is held without a copy.
var errStoreFull = errors.New("fd store full (FileDescriptorStoreMax=)")

// errStoreBusy is Keep's error beyond storeRate: the connection is held
// without a copy.
var errStoreBusy = errors.New("fd store: more than the rate allows")

// storeRate and storeBurst bound how many connections a second go to the
// store. systemd 252 compares each fd stored with every fd in the store:
// measured in the real-systemd box, PID 1 spent 0.81 s of CPU to store
// 1000 held connections and 2.53 s for 2000 (about 1.3 µs per fd already
// stored, per fd added). At 50 a second and 4096 stored, PID 1 spends at
// most about a quarter of a core, whatever the clients do (slowloris
// clients that reconnect are held, and would be stored, as fast as they
// come).
const (
	storeRate  = 50
	storeBurst = 100
)

// fdStore is the prefork.Store of a master run by systemd.
type fdStore struct {
	sd     *notify.FDStore
	max    int    // FileDescriptorStoreMax=
	now    int    // stored now
	next   uint64 // the N of the next name
	tokens float64
	last   time.Time // when tokens was counted
	clock  func() time.Time
}

// openFDStore returns the store the unit allows, or nil when $FDSTORE is
// unset or not a positive number, or NOTIFY_SOCKET is unset (children do
// not inherit $FDSTORE: protocol.MasterEnv). It returns an error when the
// notify socket cannot be opened.
func openFDStore() (*fdStore, error) {
	max, err := strconv.Atoi(os.Getenv(envFDStore))
	if err != nil || max <= 0 {
		return nil, nil
	}
	sd, err := notify.OpenFDStore()
	if sd == nil || err != nil {
		return nil, err
	}
	return &fdStore{sd: sd, max: max, tokens: storeBurst, clock: time.Now}, nil
}

// Keep stores fd under a new name (activation.StoredName) and returns the
// name, or errStoreFull, errStoreBusy, or the send error.
func (s *fdStore) Keep(fd, listener int, parked bool) (string, error) {
	if s.now >= s.max {
		return "", errStoreFull
	}
	if !s.take() {
		return "", errStoreBusy
	}
	name := activation.StoredName{Listener: listener, Parked: parked, N: s.next}.String()
	if err := s.sd.Store(fd, name); err != nil {
		return "", err
	}
	s.next++
	s.now++
	return name, nil
}

// take takes a token of the storeRate bucket, and returns false if none
// is left.
func (s *fdStore) take() bool {
	now := s.clock()
	s.tokens = min(storeBurst, s.tokens+now.Sub(s.last).Seconds()*storeRate)
	s.last = now
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

// Remove removes name from the store.
func (s *fdStore) Remove(name string) error {
	s.now--
	return s.sd.Remove(name)
}

// takeBack turns the connections systemd passed back into the pool's,
// counts them as stored and numbers new names after theirs.
func (s *fdStore) takeBack(conns []activation.Conn) []prefork.Stored {
	stored := make([]prefork.Stored, len(conns))
	for i, c := range conns {
		stored[i] = prefork.Stored{FD: c.FD, Listener: c.Listener, Parked: c.Parked, Name: c.Name}
		s.next = max(s.next, c.N+1)
	}
	s.now += len(conns)
	return stored
}

// useFDStore gives the pool the unit's fd store and the connections taken
// back from it (conns, owned by the pool from then on). When the unit
// allows no store it closes conns and removes them from systemd's store
// (which would keep them open). It logs what fails; the pool runs without
// a store then.
func useFDStore(pool *prefork.Pool, conns []activation.Conn, log *slog.Logger) *fdStore {
	s, err := openFDStore()
	if err != nil {
		log.Warn("no fd store: held connections die with the master", "err", err)
	}
	if s == nil {
		dropStored(conns)
		return nil
	}
	store := prefork.Store{Keep: s.Keep, Remove: s.Remove}
	if err := pool.UseStore(store, s.takeBack(conns)); err != nil {
		log.Warn("no fd store", "err", fmt.Errorf("use fd store: %w", err))
		s.sd.Close()
		return nil
	}
	return s
}

// dropStored closes conns and removes them from systemd's store, if
// NOTIFY_SOCKET is set.
func dropStored(conns []activation.Conn) {
	activation.CloseConns(conns)
	if len(conns) == 0 {
		return
	}
	sd, err := notify.OpenFDStore()
	if sd == nil || err != nil {
		return
	}
	defer sd.Close()
	for _, c := range conns {
		sd.Remove(c.Name)
	}
}
