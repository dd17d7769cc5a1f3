package prefork

import (
	"testing"
	"time"

	"github.com/actd/actd/protocol"
)

// Table tests of the tick's pure policies (issue 23 item 5): how to space
// spawns while the worker fails (backoff), and when a pool may sleep and
// until when (quiet, quietUntil), and the state the tick carries between
// turns (pacing, scaler). Each row is a state and a moment; no
// child, no clock, no sleep. The deadlines and when to ping are
// deadlines_test.go's (TestDue, TestPingAfter).

// policyT0 is the moment the rows count from.
var policyT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at returns policyT0 plus d.
func at(d time.Duration) time.Time { return policyT0.Add(d) }

// TestBackoffDelay: after n failures in a row the next start waits
// backoffBase·2^(n-1), at most backoffMax; none without failures.
func TestBackoffDelay(t *testing.T) {
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{
		{0, 0},
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{9, 25600 * time.Millisecond},
		{10, backoffMax}, // 51.2 s, capped
		{22, backoffMax}, // the shift is capped too: no overflow
		{1000, backoffMax},
	} {
		b := backoff{failures: tc.failures}
		if got := b.delay(); got != tc.want {
			t.Errorf("%d failures: delay %v, want %v", tc.failures, got, tc.want)
		}
	}
}

// TestBackoffAllows: without failures every wanted spawn may happen; while
// failing, none before notBefore and one at a time from it on.
func TestBackoffAllows(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int
		notBefore time.Time
		now       time.Time
		want, got int
	}{
		{"no failures", 0, time.Time{}, at(0), 5, 5},
		{"no failures, a past delay forgotten", 0, at(time.Hour), at(0), 5, 5},
		{"failing, within the delay", 3, at(time.Second), at(time.Second - 1), 5, 0},
		{"failing, at the delay's end", 3, at(time.Second), at(time.Second), 5, 1},
		{"failing, past it: one probe", 3, at(time.Second), at(time.Hour), 5, 1},
		{"failing, none wanted", 3, at(time.Second), at(time.Hour), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := backoff{failures: tc.failures, notBefore: tc.notBefore}
			if got := b.allows(tc.now, tc.want); got != tc.got {
				t.Errorf("allows(%d): got %d, want %d", tc.want, got, tc.got)
			}
		})
	}
}

// TestBackoffSteps: what fail, spawned, proves and ok do to a backoff, one
// row a step from the state the row gives.
func TestBackoffSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    backoff
		step func(*backoff)
		want backoff
	}{
		{"first failure", backoff{}, func(b *backoff) { b.fail(at(0), "exit status 1") },
			backoff{failures: 1, lastFail: at(0), lastExit: "exit status 1", notBefore: at(backoffBase)}},
		{"another failure doubles the delay", backoff{failures: 1, lastFail: at(0), notBefore: at(backoffBase)},
			func(b *backoff) { b.fail(at(time.Second), "signal: killed") },
			backoff{failures: 2, lastFail: at(time.Second), lastExit: "signal: killed", notBefore: at(time.Second + 2*backoffBase)}},
		{"a spawn while failing waits a full delay", backoff{failures: 2, notBefore: at(0)},
			func(b *backoff) { b.spawned(at(time.Minute)) }, backoff{failures: 2, notBefore: at(time.Minute + 2*backoffBase)}},
		{"a spawn without failures changes nothing", backoff{}, func(b *backoff) { b.spawned(at(time.Minute)) }, backoff{}},
		{"ok ends the streak", backoff{failures: 5, lastFail: at(0), lastExit: "x", notBefore: at(time.Hour)},
			func(b *backoff) { b.ok() }, backoff{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			tc.step(&b)
			if b != tc.want {
				t.Errorf("got %+v, want %+v", b, tc.want)
			}
		})
	}
}

// TestBackoffProves: a child ends a failure streak if it started after the
// last failure and lived provenAge; nothing proves without a streak.
func TestBackoffProves(t *testing.T) {
	failing := backoff{failures: 3, lastFail: at(0)}
	for _, tc := range []struct {
		name         string
		b            backoff
		started, now time.Time
		want         bool
	}{
		{"no streak", backoff{}, at(time.Second), at(time.Hour), false},
		{"started before the last failure", failing, at(-time.Hour), at(time.Hour), false},
		{"started at the last failure", failing, at(0), at(time.Hour), false},
		{"started after it, too young", failing, at(time.Second), at(time.Second + provenAge - 1), false},
		{"started after it, provenAge old", failing, at(time.Second), at(time.Second + provenAge), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.b.proves(tc.started, tc.now); got != tc.want {
				t.Errorf("proves: got %v, want %v", got, tc.want)
			}
		})
	}
}

// quietPool is a dispatch pool of two idle children of generation 0, its
// start done and its scaler content, at policyT0: quiet, unless a row of
// TestQuiet changes it.
func quietPool() *Pool {
	p := benchPool(2, protocol.Dispatch)
	p.now, p.scaler.settled, p.gens.ready.done = policyT0, true, true
	for _, s := range p.slots {
		s.heard, s.since = policyT0, policyT0
	}
	return p
}

// TestQuiet: a pool sleeps until its next ping only when nothing but pings
// needs a tick: every child of the current generation idle (or running,
// in shared mode), nothing queued, ordered or starting, the scaler
// content, no start failures, no drain, no stop.
func TestQuiet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(p *Pool)
		want   bool
	}{
		{"idle children, nothing to do", func(p *Pool) {}, true},
		{"running children (shared mode)", func(p *Pool) { p.slots[0].state, p.slots[1].state = running, running }, true},
		{"an empty slot", func(p *Pool) { p.slots[1].state = empty }, true},
		{"stopping", func(p *Pool) { p.stop = &stopping{} }, false},
		{"the scaler not content", func(p *Pool) { p.scaler.settled = false }, false},
		{"a start failure", func(p *Pool) { p.backoff.failures = 1 }, false},
		{"a child to replace", func(p *Pool) { p.scaler.replace = 1 }, false},
		{"the start not done", func(p *Pool) { p.gens.ready.done = false }, false},
		{"no start yet", func(p *Pool) { p.gens.ready = nil }, false},
		{"a child busy", func(p *Pool) { p.slots[1].state = busy }, false},
		{"a child starting", func(p *Pool) { p.slots[1].state = starting }, false},
		{"a child ordered", func(p *Pool) { p.slots[1].state = ordered }, false},
		{"a child draining", func(p *Pool) { p.slots[1].fate = draining }, false},
		{"a child of the last generation", func(p *Pool) { p.slots[1].gen = -1 }, false},
		{"a connection queued", func(p *Pool) { p.listeners = []*listener{{queue: 1}} }, false},
		{"an order out", func(p *Pool) { p.listeners = []*listener{{orders: 1}} }, false},
		{"a listener starved", func(p *Pool) { p.listeners = []*listener{{starved: true}} }, false},
		{"a listener unsure", func(p *Pool) { p.listeners = []*listener{{unsure: true}} }, false},
		{"a listener with nothing", func(p *Pool) { p.listeners = []*listener{{}} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := quietPool()
			tc.change(p)
			if got := p.quiet(); got != tc.want {
				t.Errorf("quiet: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestQuietUntil: a quiet pool's next tick is 1 ms past the first ping or
// ping answer due among its idle children, PingInterval at most.
func TestQuietUntil(t *testing.T) {
	const interval, timeout = 10 * time.Second, 2 * time.Second
	for _, tc := range []struct {
		name   string
		change func(p *Pool)
		want   time.Time
	}{
		{"both heard now: a ping interval", func(p *Pool) {}, at(interval + time.Millisecond)},
		{"one heard 4 s ago: its ping", func(p *Pool) { p.slots[1].heard = at(-4 * time.Second) }, at(6*time.Second + time.Millisecond)},
		{"a ping out: its answer", func(p *Pool) { p.slots[0].pingSentAt = at(-500 * time.Millisecond) }, at(1500*time.Millisecond + time.Millisecond)},
		{"a busy child long silent: not counted", func(p *Pool) { p.slots[1].state, p.slots[1].heard = busy, at(-time.Hour) }, at(interval + time.Millisecond)},
		{"an ordered child long silent: not counted", func(p *Pool) { p.slots[1].state, p.slots[1].heard = ordered, at(-time.Hour) }, at(interval + time.Millisecond)},
		{"no children, a ping interval under the tick period: the period", func(p *Pool) {
			p.slots, p.cfg.PingInterval = nil, 100*time.Millisecond
		}, at(time.Second + time.Millisecond)},
		{"the earliest of several", func(p *Pool) {
			p.slots[0].heard = at(-3 * time.Second)
			p.slots[1].heard = at(-7 * time.Second)
		}, at(3*time.Second + time.Millisecond)},
		{"no children", func(p *Pool) { p.slots = nil }, at(interval + time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := quietPool()
			p.cfg.PingInterval, p.cfg.PingTimeout, p.cfg.ScalePeriod = interval, timeout, time.Second
			tc.change(p)
			if got := quietUntil(p.slots, p.now, p.cfg); !got.Equal(tc.want) {
				t.Errorf("quietUntil: got +%v, want +%v", got.Sub(policyT0), tc.want.Sub(policyT0))
			}
		})
	}
}

// TestPacing: every sets the next tick a period away, not hushed; hush
// puts it off only to a later time; wake brings a hushed tick within a
// period, and leaves one not hushed as it is.
func TestPacing(t *testing.T) {
	const period = time.Second
	for _, tc := range []struct {
		name       string
		from       pacing
		do         func(*pacing) bool
		want       pacing
		wantResult bool
	}{
		{"every", pacing{next: at(time.Hour), hushed: true},
			func(pc *pacing) bool { pc.every(at(0), period); return false }, pacing{next: at(period)}, false},
		{"hush to later", pacing{next: at(period)},
			func(pc *pacing) bool { return pc.hush(at(time.Minute)) }, pacing{next: at(time.Minute), hushed: true}, true},
		{"hush to earlier", pacing{next: at(period)},
			func(pc *pacing) bool { return pc.hush(at(period / 2)) }, pacing{next: at(period)}, false},
		{"hush to the same", pacing{next: at(period)},
			func(pc *pacing) bool { return pc.hush(at(period)) }, pacing{next: at(period)}, false},
		{"wake hushed", pacing{next: at(time.Minute), hushed: true},
			func(pc *pacing) bool { pc.wake(at(0), period); return false }, pacing{next: at(period)}, false},
		{"wake hushed, due sooner", pacing{next: at(period / 2), hushed: true},
			func(pc *pacing) bool { pc.wake(at(0), period); return false }, pacing{next: at(period / 2)}, false},
		{"wake not hushed", pacing{next: at(time.Minute)},
			func(pc *pacing) bool { pc.wake(at(0), period); return false }, pacing{next: at(time.Minute)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc := tc.from
			got := tc.do(&pc)
			if pc != tc.want || got != tc.wantResult {
				t.Errorf("got %+v (%v), want %+v (%v)", pc, got, tc.want, tc.wantResult)
			}
		})
	}
}

// TestScalerBetweenPeriods: a scale period is due once per period, an
// overload warning once per its period, and decide carries the ramp from
// one call to the next and notes a decision to do nothing.
func TestScalerBetweenPeriods(t *testing.T) {
	const period = time.Second
	var sc scaler
	for _, step := range []struct {
		now  time.Duration
		want bool
	}{{0, true}, {period / 2, false}, {period, true}, {period + 1, false}, {3 * period, true}} {
		if got := sc.elapsed(policyT0.Add(step.now), period); got != step.want {
			t.Errorf("elapsed at %v: got %v, want %v", step.now, got, step.want)
		}
		if got := sc.warn(policyT0.Add(step.now), period); got != step.want {
			t.Errorf("warn at %v: got %v, want %v", step.now, got, step.want)
		}
	}
	l := scaleLimits{MinChildren: 1, MaxChildren: 100, MinSpare: 10, MaxSpare: 20}
	sc = scaler{ramp: 1}
	for i, want := range []scaleDecision{{Spawn: 10, Ramp: 2}, {Spawn: 10, Ramp: 4}, {Ramp: 1}} {
		s := scaleState{Children: 10 * i, Spare: 0}
		if i == 2 {
			s.Spare = 10
		}
		if got := sc.decide(s, l); got != want || sc.ramp != want.Ramp || sc.settled != (i == 2) {
			t.Errorf("decide %d: got %+v (ramp %d, settled %v), want %+v (settled %v)", i, got, sc.ramp, sc.settled, want, i == 2)
		}
	}
}
