package prefork

import "time"

// maxRamp caps how many children one scale period may start when the pool
// grows by doubling, as Apache prefork's MAX_SPAWN_RATE does.
const maxRamp = 32

// scaleState is what the scaler sees of the current generation of children.
type scaleState struct {
	Children int // live children that are not draining: starting, idle or busy
	Spare    int // of those, starting or idle (Apache counts starting as idle)
	Queued   int // connections waiting in the accept queues, 0 if unknown
}

// scaleLimits are the pool bounds the scaler keeps.
type scaleLimits struct {
	MinChildren, MaxChildren int
	MinSpare, MaxSpare       int
}

// scaleDecision is what the scaler wants done in this period.
type scaleDecision struct {
	Spawn  int  // children to start now
	Retire int  // idle children to drain now (the highest-numbered slots)
	Ramp   int  // the ramp to pass to the next call
	AtMax  bool // more spare children are wanted but the pool is at MaxChildren
}

// Scale decides one scale period. It is Apache prefork's
// perform_idle_server_maintenance with two changes:
//
//   - Connections waiting in the accept queue count against the spare
//     children (they will take one each), so a burst is met in one period
//     rather than with Apache's 1, 2, 4 ... 32 per second ramp.
//   - The pool never shrinks below MinChildren (spamd's --min-children) and
//     is refilled to it at once.
//
// With Queued = 0 and a shortfall no larger than ramp it does exactly what
// Apache does: start ramp children and double the ramp up to maxRamp; retire
// one idle child per period while there are more than MaxSpare; otherwise
// reset the ramp to 1. Scale does no I/O and reads no clock.
func decide(s scaleState, l scaleLimits, ramp int) scaleDecision {
	ramp = max(ramp, 1)
	room := l.MaxChildren - s.Children
	short := max(l.MinChildren-s.Children, l.MinSpare-(s.Spare-s.Queued))
	switch {
	case short > 0 && room <= 0:
		return scaleDecision{Ramp: 1, AtMax: true}
	case short > 0:
		return scaleDecision{Spawn: min(max(ramp, short), room), Ramp: min(ramp*2, maxRamp)}
	case s.Spare > l.MaxSpare && s.Children > l.MinChildren:
		return scaleDecision{Retire: 1, Ramp: 1}
	}
	return scaleDecision{Ramp: 1}
}

// scaler is what the scaler keeps from one period to the next: when it
// last ran, its ramp, the children to replace, whether it was content,
// and when demand it could not meet was last logged.
type scaler struct {
	last    time.Time // the last scale period
	ramp    int       // decide's ramp; 1 from the start of each generation
	replace int       // children that died unasked since the last scale
	settled bool      // the last period decided nothing (quiet.go)
	warned  time.Time // the last overload warning (dispatch.go)
}

// elapsed reports whether a scale period is due at now, period after the
// last; if so, now is the last.
func (sc *scaler) elapsed(now time.Time, period time.Duration) bool {
	if now.Sub(sc.last) < period {
		return false
	}
	sc.last = now
	return true
}

// decide is decide (scaler.go) with the ramp carried over; it notes
// whether the decision is to do nothing.
func (sc *scaler) decide(s scaleState, l scaleLimits) scaleDecision {
	d := decide(s, l, sc.ramp)
	sc.ramp = d.Ramp
	sc.settled = d == scaleDecision{Ramp: 1}
	return d
}

// warn reports whether an overload may be logged at now, at most once per
// every (overloadLogEvery); if so, now is the last.
func (sc *scaler) warn(now time.Time, every time.Duration) bool {
	if now.Sub(sc.warned) < every {
		return false
	}
	sc.warned = now
	return true
}
