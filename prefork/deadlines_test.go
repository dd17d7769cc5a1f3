package prefork

import (
	"testing"
	"time"
)

// TestDue: every row of docs/architecture.md's deadline column, at the time
// just inside and just past each limit, from the pure policy alone: no child,
// no clock.
func TestDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := deadlineLimits{Start: 5 * time.Second, Ping: 2 * time.Second, PingAfter: 10 * time.Second,
		Busy: 30 * time.Second, BusyGrace: 3 * time.Second, Slow: 20 * time.Second}
	noBusy := l
	noBusy.Busy, noBusy.Slow = 0, 0
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tc := range []struct {
		name string
		s    slot // since and started = t0 unless set
		now  time.Time
		l    deadlineLimits
		want duty
	}{
		{"starting within start-timeout", slot{state: starting}, at(5 * time.Second), l, duty{}},
		{"starting past start-timeout", slot{state: starting}, at(5*time.Second + 1), l, duty{act: doHung, why: "no hello within 5s"}},
		{"greeted past start-timeout", slot{state: greeted}, at(6 * time.Second), l, duty{act: doHung, why: "hello but not ready within 5s"}},
		{"greeted in time, started too long ago", slot{state: greeted, since: at(4 * time.Second)}, at(5*time.Second + 1), l, duty{act: doHung, why: "hello but not ready within 5s"}},
		{"greeted within start-timeout of its start", slot{state: greeted, since: at(4 * time.Second)}, at(5 * time.Second), l, duty{}},
		{"killed: nothing, whatever is due", slot{state: starting, fate: killed, deadline: at(time.Second)}, at(time.Hour), l, duty{}},
		{"draining within its deadline", slot{state: idle, fate: draining, heard: at(0), deadline: at(2 * time.Second)}, at(2 * time.Second), l, duty{}},
		{"draining past its deadline", slot{state: busy, fate: draining, deadline: at(2 * time.Second)}, at(2*time.Second + 1), l, duty{act: doHung, why: "did not exit when told"}},
		{"deadline before start-timeout", slot{state: starting, deadline: at(time.Second)}, at(time.Hour), l, duty{act: doHung, why: "did not exit when told"}},
		{"ordered within ping-timeout", slot{state: ordered}, at(2 * time.Second), l, duty{}},
		{"ordered past ping-timeout", slot{state: ordered}, at(3 * time.Second), l, duty{act: doHung, why: "no answer to an accept order within 2s"}},
		{"moving past ping-timeout", slot{state: moving}, at(3 * time.Second), l, duty{act: doHung, why: "no answer to an accept order within 2s"}},
		{"idle heard recently", slot{state: idle, heard: at(0)}, at(10*time.Second - 1), l, duty{}},
		{"idle silent for ping-after: ping", slot{state: idle, heard: at(0)}, at(10 * time.Second), l, duty{act: doPing}},
		{"standby silent: ping", slot{state: standby, heard: at(0)}, at(time.Minute), l, duty{act: doPing}},
		{"ping outstanding within ping-timeout", slot{state: idle, heard: at(0), pingSentAt: at(10 * time.Second)}, at(12 * time.Second), l, duty{}},
		{"ping unanswered past ping-timeout", slot{state: idle, heard: at(0), pingSentAt: at(10 * time.Second)}, at(12*time.Second + 1), l, duty{act: doPingLost, why: "no answer to ping within 2s"}},
		{"busy within every limit", slot{state: busy}, at(20 * time.Second), l, duty{}},
		{"busy past slow-request: log once", slot{state: busy}, at(21 * time.Second), l, duty{slow: true}},
		{"busy spell logged already", slot{state: busy, slowAt: at(0)}, at(21 * time.Second), l, duty{}},
		{"slow spell of an earlier connection", slot{state: busy, slowAt: at(-time.Minute)}, at(21 * time.Second), l, duty{slow: true}},
		{"busy past busy-timeout: SIGQUIT", slot{state: busy, slowAt: at(0)}, at(31 * time.Second), l, duty{act: doQuit}},
		{"busy past both at once", slot{state: movingBusy}, at(31 * time.Second), l, duty{act: doQuit, slow: true}},
		{"SIGQUIT within its grace", slot{state: busy, slowAt: at(0), quitAt: at(31 * time.Second)}, at(34 * time.Second), l, duty{}},
		{"SIGQUIT's grace over: SIGKILL", slot{state: busy, slowAt: at(0), quitAt: at(31 * time.Second)}, at(34*time.Second + 1), l, duty{act: doKill, why: "busy for more than 30s"}},
		{"busy-timeout and slow-request off", slot{state: busy}, at(24 * time.Hour), noBusy, duty{}},
		{"running (shared): no deadline", slot{state: running}, at(24 * time.Hour), l, duty{}},
		{"exiting, not draining: no deadline", slot{state: exiting}, at(24 * time.Hour), l, duty{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if s.since.IsZero() {
				s.since = t0
			}
			if s.started.IsZero() {
				s.started = t0
			}
			if got := due(&s, tc.now, tc.l); got != tc.want {
				t.Errorf("due(%v, +%v) = %+v, want %+v", s.state, tc.now.Sub(t0), got, tc.want)
			}
		})
	}
}

// TestPingAfter: idle children are pinged after the interval, but once one
// is due, every idle child silent for half of it goes with it; a child with
// a ping outstanding or not idle does not start the batch.
func TestPingAfter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const interval = 10 * time.Second
	silent := func(st state, d time.Duration) *slot { return &slot{state: st, heard: t0.Add(-d)} }
	pinged := silent(idle, time.Minute)
	pinged.pingSentAt = t0.Add(-time.Second)
	for _, tc := range []struct {
		name  string
		slots []*slot
		want  time.Duration
	}{
		{"no slots", nil, interval},
		{"all heard recently", []*slot{silent(idle, 9*time.Second), silent(standby, 5*time.Second)}, interval},
		{"one idle due: batch", []*slot{silent(idle, time.Second), silent(idle, interval)}, interval / 2},
		{"one standby due: batch", []*slot{silent(standby, interval)}, interval / 2},
		{"ping outstanding: not due", []*slot{pinged}, interval},
		{"busy for long: not due", []*slot{silent(busy, time.Hour), silent(ordered, time.Hour)}, interval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pingAfter(tc.slots, t0, interval); got != tc.want {
				t.Errorf("pingAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCheckSlot: what due says is done to a slot with a real back-channel,
// at a time the test sets: the ping reaches the child, the kills and the
// SIGQUIT are counted as hung, a lost ping as failed too.
func TestCheckSlot(t *testing.T) {
	type outcome struct {
		sent        string // messages the child gets
		fate        fate
		hung        uint64
		pingsFailed uint64
		pinging     bool // a ping outstanding
		quitNow     bool // SIGQUIT noted at this tick
	}
	for _, tc := range []struct {
		name     string
		state    state
		after    time.Duration // p.now - since; heard = since
		pingSent bool          // a ping went out at since
		quit     bool          // SIGQUIT sent at since
		want     outcome
	}{
		{"idle, recently heard", idle, time.Second, false, false, outcome{fate: living}},
		{"idle, silent: pinged", idle, time.Hour, false, false, outcome{sent: "P", fate: living, pinging: true}},
		{"ping lost: killed", idle, time.Hour, true, false, outcome{fate: killed, hung: 1, pingsFailed: 1, pinging: true}},
		{"no hello: killed", starting, time.Hour, false, false, outcome{fate: killed, hung: 1}},
		{"busy too long: SIGQUIT", busy, time.Hour, false, false, outcome{fate: living, hung: 1, quitNow: true}},
		{"SIGQUIT's grace over: killed", busy, time.Hour, false, true, outcome{fate: killed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, children, _ := dispatchPool(t, 1)
			if err := p.reports.open(p.poll, p.log); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.reports.poll.close)
			p.cfg.BusyTimeout, p.cfg.BusyKillGrace = time.Minute, time.Minute
			s := p.slots[0]
			s.state, s.heard = tc.state, s.since
			if tc.pingSent {
				s.pingSentAt = s.since
			}
			if tc.quit {
				s.quitAt = s.since
			}
			p.now = s.since.Add(tc.after)
			p.checkSlot(s, p.cfg.deadlines(p.cfg.PingInterval))
			got := outcome{fate: s.fate, hung: p.stats.Hung, pingsFailed: p.stats.PingsFailed,
				pinging: !s.pingSentAt.IsZero(), quitNow: s.quitAt.Equal(p.now)}
			if s.ch >= 0 {
				got.sent = orders(t, children[0])
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
