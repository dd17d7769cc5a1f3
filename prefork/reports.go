package prefork

import (
	"log/slog"
	"slices"
	"time"

	"github.com/actd/actd/protocol"
)

// The children's reports (their back-channels) sit in an epoll set of their
// own, nested in the loop's set. In dispatch mode the master reads them when
// it needs them (before it picks a child for a connection, at every tick,
// before a snapshot) and lets them wake it only while it needs them at once:
// a connection waits for a child to be idle, an order may have left a
// connection uncovered, a level-triggered listener waits for the answer to
// its one order, a child is starting, or the pool stops. All children busy
// with nobody waiting is not such a case: the next arrival wakes the master,
// which then reads the reports first. While children are idle a connection
// costs the master one wakeup (the listener's) instead of three (the
// listener's, the child's B, its I). In exclusive and shared modes the
// reports always wake the master, as they are rare there.
//
// What waits is read within a tick period at most, so a B can be seen that
// much late: --busy-timeout counts from when the master read it.
//
// A child that sends more than chattyReports request reports (R) in a row,
// with no other message between, is muted: its channel stays in the set
// but no longer wakes the loop, and every harvest reads at most
// harvestRounds of its messages, as for any other child. Its next message
// of another kind (I, K, B, S) unmutes it. A busy child sending R nonstop
// so costs the master a few reads per harvest instead of its whole core
// (where the reports are armed: always under an accept filter); a
// legitimate one (a keep-alive stream reported request by request) has
// its I or K read at the next harvest, a tick at most, instead of at once.

// harvestRounds bounds one harvest: each round reads one message from every
// channel that has one, so a chatty child cannot hold the loop.
const harvestRounds = 4

// chattyReports is how many R in a row mute a child: far more than a
// request report per request of a keep-alive stream sends between a
// master's reads (the libraries send one for a request that lasts 5 ms),
// far fewer than a flood's.
const chattyReports = 64

// reports is the nested set of back-channels.
type reports struct {
	poll       *poller
	armed      bool      // its readiness wakes the loop
	harvesting bool      // a harvest is running (messages may dispatch, which harvests)
	fresh      bool      // harvested in this turn of the loop
	starting   bool      // a child may be starting: seen at the last tick or spawned since
	chatter    []int     // by slot: R read in a row; past chattyReports, muted
	muted      []int     // slots whose channel does not wake the loop
	mutes      int       // children muted since the start
	mutedLog   time.Time // when a mute was last logged (one line per overloadLogEvery)
	log        *slog.Logger
}

// open makes the nested set and registers it, armed, in the loop's set
// loop; log takes its errors and mutes. It returns newPoller's or the
// registration's error.
func (r *reports) open(loop *poller, log *slog.Logger) error {
	poll, err := newPoller()
	if err != nil {
		return err
	}
	r.poll, r.armed, r.log = poll, true, log
	return loop.add(poll.fd, eventIn, kindReports, 0)
}

// harvest reads the messages the children have sent, at most harvestRounds
// per child.
func (p *Pool) harvest() {
	r := &p.reports
	if r.harvesting || r.poll == nil {
		return
	}
	r.harvesting, r.fresh = true, true
	defer func() { r.harvesting = false }()
	for range harvestRounds {
		events, err := r.poll.poll()
		if err != nil {
			p.log.Error("read reports", "err", err)
			return
		}
		for _, ev := range events {
			p.readChannel(p.slots[ev.Pad])
		}
		read := p.readMuted()
		if len(events) == 0 && !read {
			return
		}
	}
}

// readMuted reads one message from every muted child that has one, and
// reports whether it read any.
func (p *Pool) readMuted() bool {
	read := false
	for _, n := range slices.Clone(p.reports.muted) { // reading may unmute
		read = p.readChannel(p.slots[n]) || read
	}
	return read
}

// countChatter counts message type t from slot s, at now, for the chatter
// rule: an R more, or anything else, which ends the run and unmutes s.
// slots is the size of the slot table.
func (r *reports) countChatter(s *slot, t protocol.Type, slots int, now time.Time) {
	if len(r.chatter) < slots {
		r.chatter = slices.Grow(r.chatter, slots-len(r.chatter))[:slots]
	}
	if t == protocol.Tally {
		return // at most one a second, between anything: it neither ends a run nor adds to it
	}
	if t != protocol.Request {
		r.chatter[s.num] = 0
		r.mute(s, false, now)
		return
	}
	if r.chatter[s.num]++; r.chatter[s.num] > chattyReports {
		r.mute(s, true, now)
	}
}

// mute takes slot s's channel out of the loop's wakeups (on) or puts it
// back. A mute is logged, at most once per overloadLogEvery for the pool.
func (r *reports) mute(s *slot, on bool, now time.Time) {
	i := slices.Index(r.muted, s.num)
	if on == (i >= 0) || s.ch < 0 {
		return
	}
	var events uint32
	if on {
		if r.mutes++; now.Sub(r.mutedLog) >= overloadLogEvery {
			r.mutedLog = now
			r.log.Warn("child floods its back-channel with request reports: read at each harvest only",
				"event", "chatty", "slot", s.num, "pid", s.pid, "reports", r.chatter[s.num], "mutes", r.mutes)
		}
		r.muted = append(r.muted, s.num)
	} else {
		events = eventIn
		r.muted = slices.Delete(r.muted, i, i+1)
	}
	if err := r.poll.arm(s.ch, events, kindChannel, s.num); err != nil {
		r.log.Error("watch back-channel", "slot", s.num, "err", err)
	}
}

// dropChatter drops slot s from the chatter rule: its channel is closing.
func (r *reports) dropChatter(s *slot) {
	if i := slices.Index(r.muted, s.num); i >= 0 {
		r.muted = slices.Delete(r.muted, i, i+1)
	}
	if s.num < len(r.chatter) {
		r.chatter[s.num] = 0
	}
}

// harvestOnce harvests unless it has been done in this turn already.
func (p *Pool) harvestOnce() {
	if !p.reports.fresh {
		p.harvest()
	}
}

// armReports arms or disarms the nested set, after a turn of the loop.
func (p *Pool) armReports() {
	r := &p.reports
	r.fresh = false
	on := p.mode.wantReports() // whether children's messages must wake the loop
	if r.armed == on || r.poll == nil {
		return
	}
	var events uint32
	if on {
		events = eventIn
	}
	if err := p.poll.arm(r.poll.fd, events, kindReports, 0); err != nil {
		p.log.Error("watch reports", "err", err)
		return
	}
	r.armed = on
}
