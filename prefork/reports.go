package prefork

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

// kindReports marks the nested set's event in the loop's set.
const kindReports kind = kindTimer + 1

// harvestRounds bounds one harvest: each round reads one message from every
// channel that has one, so a chatty child cannot hold the loop.
const harvestRounds = 4

// reports is the nested set of back-channels.
type reports struct {
	poll       *poller
	armed      bool // its readiness wakes the loop
	harvesting bool // a harvest is running (messages may dispatch, which harvests)
	fresh      bool // harvested in this turn of the loop
	starting   bool // a child may be starting: seen at the last tick or spawned since
}

// setupReports makes the nested set and registers it, armed, in the loop's.
func (p *Pool) setupReports() error {
	poll, err := newPoller()
	if err != nil {
		return err
	}
	p.reports.poll = poll
	p.reports.armed = true
	return p.poll.add(poll.fd, eventIn, kindReports, 0)
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
		if len(events) == 0 {
			return
		}
	}
}

// harvestOnce harvests unless it has been done in this turn already.
func (p *Pool) harvestOnce() {
	if !p.reports.fresh {
		p.harvest()
	}
}

// wantReports reports whether children's messages must wake the loop.
func (p *Pool) wantReports() bool { return p.mode.wantReports() }

// armReports arms or disarms the nested set, after a turn of the loop.
func (p *Pool) armReports() {
	r := &p.reports
	r.fresh = false
	on := p.wantReports()
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
