package prefork

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// A store keeps a copy of each connection the master holds (hold.go)
// somewhere that outlives the master, so that a master that dies without a
// drain (a crash, SIGKILL, the watchdog) loses none of them: the next master
// takes them back (UseStore) and holds them as before. cmd/actd makes
// systemd's file descriptor store of it; prefork knows only the two funcs.
//
// Only a connection that is really held is stored: one the filter does not
// find ready at its first look (a slow or silent client, a parked keep-alive
// connection between two requests). One that is ready at once goes to a
// child without a store round trip. A stored connection is removed when the
// master lets it go: handed to a child, closed, or timed out. The store is
// told after the child has it, so a master that dies in between leaves a
// copy of a connection a child serves (under KillMode=mixed the child dies
// with it, docs/operations.md).

// Store is how the master keeps its held connections outside itself. The
// zero value keeps nothing.
type Store struct {
	// Keep stores a copy of fd (the caller keeps fd), a connection held
	// from listener index listener; parked: given back by a child between
	// two requests. It returns the name to Remove it by, or an error: the
	// connection is then held without a copy.
	Keep func(fd, listener int, parked bool) (name string, err error)
	// Remove drops the copy stored under name. An error is counted.
	Remove func(name string) error
}

// Stored is a connection a starting master takes back from its store.
type Stored struct {
	FD       int    // owned by the pool once passed to UseStore
	Listener int    // index of the listener it was accepted on
	Parked   bool   // given back by a child between two requests
	Name     string // its name in the store, for Store.Remove
}

// restoring is what UseStore gave the pool: the store, and the connections
// taken back from it that Run's start holds or lets go (adoptStored).
type restoring struct {
	store     Store
	takenBack []Stored // until Run's start takes them
}

// take returns the connections taken back, once: the pool owns them.
func (r *restoring) take() []Stored {
	stored := r.takenBack
	r.takenBack = nil
	return stored
}

// remove removes name from the store, for a connection never held. It does
// nothing without a store.
func (r *restoring) remove(name string) {
	if r.store.Remove != nil {
		r.store.Remove(name)
	}
}

// storeCounts count the store's work, for a snapshot (HeldInfo).
type storeCounts struct {
	stored uint64 // connections kept (and taken back) so far
	now    int    // in the store now
	failed uint64 // Keep or Remove errors
}

// UseStore makes the pool keep its held connections in s, and hold the
// connections taken back from it (stored) as soon as Run starts, looking at
// each at once: a request that came while no master ran goes to the first
// idle child. Call it once, before Run. The pool owns the fds in stored from
// then on.
//
// A pool that holds no connection (no accept filter) closes stored at Run's
// start and removes them from s. UseStore returns an error, and closes the
// fds, if Run was called already.
func (p *Pool) UseStore(s Store, stored []Stored) error {
	if p.ran {
		closeStored(stored)
		return fmt.Errorf("pool: UseStore called after Run")
	}
	p.restore = restoring{store: s, takenBack: stored}
	if x, ok := p.mode.(*handoffMode); ok { // the one mode that holds connections
		x.hold.store = s
	}
	return nil
}

// adoptStored holds the connections taken back from the store, at Run's
// start, or lets them go if the mode holds none or their listener is gone.
func (p *Pool) adoptStored() {
	stored := p.restore.take()
	x, ok := p.mode.(*handoffMode)
	for _, c := range stored {
		if !ok || c.Listener < 0 || c.Listener >= len(p.listeners) {
			p.log.Warn("closing a connection taken back from the store", "event", "restore", "name", c.Name,
				"reason", "no accept filter, or no listener "+fmt.Sprint(c.Listener))
			unix.Close(c.FD)
			p.restore.remove(c.Name)
			continue
		}
		unix.SetNonblock(c.FD, true) // as accept4 made it: stored copies share the flag, but be sure
		i := x.hold.add(c.FD, c.Listener, p.now, c.Parked)
		x.hold.conns[i].stored = c.Name
		if !c.Parked { // its header may be still to come: the address of one read is lost (proxyhold.go)
			x.hold.trust(i, p.proxyNets(), maybeHeader)
		}
		x.hold.stored.now++
		x.hold.stored.stored++
		x.lookBack(i)
	}
	if len(stored) > 0 {
		p.log.Info("took back held connections from the store", "event", "restore", "count", len(stored))
	}
}

// lookBack looks at connection i, just taken back: one ready waits for
// the first idle child (none is idle yet, so it is no overload), one gone
// is closed, one not ready is watched.
func (x *handoffMode) lookBack(i int) {
	switch x.hold.look(i) {
	case isBadHeader:
		x.proxyFailed(i, "malformed")
		x.close(i)
	case isGone:
		x.p.stats.HeldClosed++
		x.close(i)
	case isReady:
		x.hold.markReady(i)
	default:
		x.poll(i)
	}
}

// closeStored closes the fds of stored.
func closeStored(stored []Stored) {
	for _, c := range stored {
		unix.Close(c.FD)
	}
}

// keep stores entry i if it is not stored yet and the holder has a store.
func (h *holder) keep(i int) {
	c := &h.conns[i]
	if c.stored != "" || h.store.Keep == nil {
		return
	}
	name, err := h.store.Keep(c.fd, c.listener, c.parked)
	if err != nil {
		h.stored.failed++
		return
	}
	c.stored = name
	h.stored.now++
	h.stored.stored++
}

// unkeep removes entry i from the store if it is stored.
func (h *holder) unkeep(i int) {
	c := &h.conns[i]
	if c.stored == "" {
		return
	}
	if err := h.store.Remove(c.stored); err != nil {
		h.stored.failed++
	}
	c.stored = ""
	h.stored.now--
}
