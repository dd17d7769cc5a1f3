package prefork

import (
	"context"
	"fmt"
	"time"
)

// Stats are the pool's counters since Run started.
type Stats struct {
	Served      uint64    `json:"served"`          // connections accepted by children
	Orders      uint64    `json:"orders"`          // accept orders sent (dispatch mode)
	KeepOrders  uint64    `json:"keep_orders"`     // of them, KeepAccepting orders (more waited than children were idle)
	Spawned     uint64    `json:"spawned"`         // children started
	Respawned   uint64    `json:"respawned"`       // children that died or were killed unasked, and were replaced
	Hung        uint64    `json:"hung"`            // children that missed a deadline (ping, order, start, busy timeout)
	Slow        uint64    `json:"slow"`            // busy spells that outlasted --slow-request, logged once each
	Recycled    uint64    `json:"recycled"`        // children retired after --max-conn-per-child
	MemRecycled uint64    `json:"memory_recycled"` // children retired over --max-child-memory
	OOMKilled   uint64    `json:"oom_killed"`      // children killed by the kernel's OOM killer
	Orphans     uint64    `json:"orphans_killed"`  // processes a child left in its cgroup, killed as it was reaped (leftovers.go)
	Overloads   uint64    `json:"overloads"`       // times a connection waited with no idle child
	Garbage     uint64    `json:"garbage"`         // children killed for a bad message
	PingsFailed uint64    `json:"pings_failed"`    // pings not answered in time
	Reloads     uint64    `json:"reloads"`         // generations started by Reload
	AtMax       bool      `json:"at_max"`          // the scaler wanted more children than --max-children
	Stuck       bool      `json:"stuck"`           // connections wait, children idle, nothing accepted for a tick
	LoopAt      time.Time `json:"loop_at"`         // when the master loop last turned over
	Turns       uint64    `json:"turns"`           // times the master loop woke up

	// Under an accept filter (handoff.go):
	Held         uint64 `json:"held,omitempty"`          // connections held from their start: accepted by the master, or given to it not ready (K) by a child that screens
	Handoffs     uint64 `json:"handoffs,omitempty"`      // connections handed to a child (C)
	HoldTimeouts uint64 `json:"hold_timeouts,omitempty"` // held connections closed after --hold-timeout
	HeldClosed   uint64 `json:"held_closed,omitempty"`   // held connections the client closed first
	Shed         uint64 `json:"shed,omitempty"`          // held connections closed to make room (max-held, out of fds)
	Parked       uint64 `json:"parked,omitempty"`        // keep-alive connections given back by a child (K)
	// Write completion (offload.go):
	Finishing    uint64 `json:"finishing,omitempty"`     // responses children handed the master to finish (W)
	Finished     uint64 `json:"finished,omitempty"`      // of them, sent whole
	FinishFailed uint64 `json:"finish_failed,omitempty"` // of them, ended early: the client gone, or the data short
	SendTimeouts uint64 `json:"send_timeouts,omitempty"` // of them, closed after --send-timeout without progress (or at the graceful timeout)
	OverTotal    uint64 `json:"over_total,omitempty"`    // responses not taken: beyond --offload-total, given back to a child (Unsent)

	servedAtTick uint64
	stuckTicks   int
	pingFails    int // pings unanswered in a row, across children; a pong resets it
}

// SlotInfo is one scoreboard line.
type SlotInfo struct {
	Slot       int       `json:"slot"`
	State      string    `json:"state"` // letter; see docs/operations.md
	PID        int       `json:"pid"`
	Generation int       `json:"generation"`
	Served     uint64    `json:"served"`
	Since      time.Time `json:"since"`             // in this state since
	Request    string    `json:"request,omitempty"` // what it said it serves (R), while busy
	Memory     uint64    `json:"memory_bytes"`      // resident memory at the last tick (RSS; docs/operations.md)
	CPU        float64   `json:"cpu_seconds"`       // user + system CPU time used
}

// listenerInfo is one listening socket and its accept queue, a line of
// Snapshot.Listeners. Clients read its fields; none names the type, so it
// is not exported (TestExportBudget).
type listenerInfo struct {
	Name  string `json:"name"`
	Queue int    `json:"queue"` // -1: the kernel does not tell
}

// HeldInfo is what the master holds under an accept filter: connections
// accepted and not ready, ready and waiting for an idle child, and parked
// (given back between two keep-alive requests).
type HeldInfo struct {
	Filter string        `json:"filter"`
	Held   int           `json:"held"`   // all of them
	Ready  int           `json:"ready"`  // of them, ready for a child: the scaler counts them as demand
	Parked int           `json:"parked"` // of them, given back by a child
	Oldest time.Duration `json:"oldest"` // how long the oldest has been held (or parked)
	Max    int           `json:"max"`    // --max-held
	// With a store (store.go): connections in it now, kept so far, and
	// Keep or Remove errors.
	Stored      int    `json:"stored,omitempty"`
	StoredTotal uint64 `json:"stored_total,omitempty"`
	StoreFailed uint64 `json:"store_failed,omitempty"`
	// Responses the master finishes (offload.go): connections, the data
	// handed over (memory, for a memfd), of it not sent yet, and how long
	// ago the oldest was handed over.
	Sending       int           `json:"sending"`
	SendingBytes  int64         `json:"sending_bytes"`
	SendingLeft   int64         `json:"sending_left"`
	SendingOldest time.Duration `json:"sending_oldest"`
	Refused       int           `json:"refused"` // responses beyond --offload-total waiting for a child to write them (Unsent)
	// Under http with --hold-body (bodies.go): connections held for their
	// body now and the bytes in their queues (head included); bodies
	// handed over at the bound, with their queue full before it, or after
	// --hold-timeout without bytes, in all; 100 Continue answers sent.
	Bodies      int    `json:"bodies,omitempty"`
	BodyBytes   int64  `json:"body_bytes,omitempty"`
	BodyBound   uint64 `json:"body_bound,omitempty"`
	BodyFull    uint64 `json:"body_full,omitempty"`
	BodyStalled uint64 `json:"body_stalled,omitempty"`
	Continues   uint64 `json:"continues,omitempty"`
	// Under --proxy-protocol-from (proxyhold.go): PROXY headers the master
	// read, and connections it closed for a malformed header or one not
	// complete within --hold-timeout.
	ProxyHeaders uint64 `json:"proxy_headers,omitempty"`
	ProxyFailed  uint64 `json:"proxy_failed,omitempty"`
	TooLarge     uint64 `json:"too_large,omitempty"` // 413 answers for a Content-Length over --max-request-body (bodylimit.go)
}

// Snapshot is the pool's state at one moment, taken on the master loop.
type Snapshot struct {
	Mode       string         `json:"mode"`
	Generation int            `json:"generation"`
	Starting   int            `json:"starting"`
	Idle       int            `json:"idle"`
	Busy       int            `json:"busy"`     // busy or ordered to accept
	Running    int            `json:"running"`  // shared mode: up, state unknown
	Draining   int            `json:"draining"` // draining, killed or exiting
	Children   int            `json:"children"` // live, not draining
	Max        int            `json:"max"`
	Queue      int            `json:"queue"`    // summed over listeners that tell
	Failures   int            `json:"failures"` // start failures in a row
	RetryIn    time.Duration  `json:"retry_in"` // until the next start is allowed, while failing
	LastExit   string         `json:"last_exit,omitempty"`
	Ready      bool           `json:"ready"`
	Stopping   bool           `json:"stopping"`
	Taken      time.Time      `json:"taken"`
	Stats      Stats          `json:"stats"`
	Listeners  []listenerInfo `json:"listeners"`
	Slots      []SlotInfo     `json:"slots"`
	Held       *HeldInfo      `json:"held,omitempty"`      // under an accept filter in dispatch mode
	Zygote     *zygoteInfo    `json:"zygote,omitempty"`    // under --preload (zygote.go)
	Abandoned  *Abandoned     `json:"abandoned,omitempty"` // the last reload's generation given up (abandon.go)
	Requests   *requestsInfo  `json:"requests,omitempty"`  // what children answered, as they tallied it (T, tally.go); nil before any

	pingFailing bool
}

// unhealthyPingFails missed pings in a row, with no pong from any child in
// between, make the pool unhealthy for the watchdog.
const unhealthyPingFails = 2

// Snapshot takes a snapshot on the master loop. It returns ErrStopped once
// Run has returned, or ctx.Err() if the loop does not answer before ctx is
// done (a wedged master).
func (p *Pool) Snapshot(ctx context.Context) (Snapshot, error) {
	snap := make(chan Snapshot, 1)
	if err := p.inbox.call(ctx, func() { snap <- p.snapshot() }); err != nil {
		return Snapshot{}, err
	}
	return <-snap, nil
}

func (p *Pool) snapshot() Snapshot {
	p.harvest()
	now := time.Now()
	s := Snapshot{Mode: p.cfg.Mode.String(), Generation: p.gens.cur, Max: p.cfg.MaxChildren,
		Failures: p.backoff.failures, LastExit: p.backoff.lastExit,
		Ready: p.gens.started(), Stopping: p.stop != nil, Taken: now, Stats: p.stats}
	if p.backoff.failures > 0 {
		s.RetryIn = max(p.backoff.notBefore.Sub(now), 0)
	}
	// One hung child is killed and replaced: the pool still works. Two
	// missed pings with no answer from any child in between say it does not.
	s.pingFailing = p.stats.pingFails >= unhealthyPingFails
	for _, l := range p.listeners {
		q, ok := queueDepth(l.FD)
		if !ok {
			q = -1
		} else {
			s.Queue += q
		}
		s.Listeners = append(s.Listeners, listenerInfo{Name: l.Name, Queue: q})
	}
	for _, sl := range p.slots {
		if sl.live() {
			s.count(sl)
		}
	}
	s.Held = p.mode.heldInfo(now)
	s.Zygote = p.launcher.info()
	s.Abandoned = p.gens.abandoned
	s.Requests = p.tallies.info()
	return s
}

func (s *Snapshot) count(sl *slot) {
	letter := sl.letter()
	s.Slots = append(s.Slots, SlotInfo{Slot: sl.num, State: string(letter), PID: sl.pid,
		Generation: sl.gen, Served: sl.served, Since: sl.since, Request: sl.request,
		Memory: sl.usage.memory, CPU: sl.usage.cpu.Seconds()})
	switch letter {
	case 'S':
		s.Starting++
	case 'I':
		s.Idle++
	case 'A', 'B':
		s.Busy++
	case 'R':
		s.Running++
	default:
		s.Draining++
		return
	}
	s.Children++
}

// Healthy reports whether the pool works, for the watchdog: the master loop
// turned over within maxAge of the snapshot, no listener is stuck (waiting
// connections, idle children, nothing accepted), and pings are answered.
// When it is not, the reason says why.
func (s Snapshot) Healthy(maxAge time.Duration) (bool, string) {
	switch {
	case s.Taken.Sub(s.Stats.LoopAt) > maxAge:
		return false, fmt.Sprintf("master loop last turned %v ago", s.Taken.Sub(s.Stats.LoopAt).Round(time.Millisecond))
	case s.Stats.Stuck:
		return false, "connections wait while children are idle"
	case s.pingFailing:
		return false, "children do not answer pings"
	}
	return true, ""
}
