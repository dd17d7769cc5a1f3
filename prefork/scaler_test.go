package prefork

import "testing"

// The Apache rows follow perform_idle_server_maintenance in Apache httpd's
// prefork MPM: spawn idle_spawn_rate children when idle < MinSpareServers and
// double the rate up to MAX_SPAWN_RATE (32); kill one idle child per second
// when idle > MaxSpareServers; reset the rate otherwise; never exceed
// MaxClients. The spamd rows follow SpamdForkScaling.pm adapt_num_children:
// add while idle < min_idle below max_children, remove one while idle >
// max_idle above min_children.
func TestScale(t *testing.T) {
	apache := scaleLimits{MinChildren: 0, MaxChildren: 256, MinSpare: 5, MaxSpare: 10}
	spamd := scaleLimits{MinChildren: 1, MaxChildren: 5, MinSpare: 1, MaxSpare: 2}
	for _, tc := range []struct {
		name string
		s    scaleState
		l    scaleLimits
		ramp int
		want scaleDecision
	}{
		{"apache: balanced resets ramp", scaleState{Children: 10, Spare: 7}, apache, 8, scaleDecision{Ramp: 1}},
		{"apache: short by one spawns ramp 1", scaleState{Children: 10, Spare: 4}, apache, 1, scaleDecision{Spawn: 1, Ramp: 2}},
		{"apache: ramp 2 spawns 2", scaleState{Children: 11, Spare: 4}, apache, 2, scaleDecision{Spawn: 2, Ramp: 4}},
		{"apache: ramp 4 spawns 4", scaleState{Children: 13, Spare: 4}, apache, 4, scaleDecision{Spawn: 4, Ramp: 8}},
		{"apache: ramp capped at 32", scaleState{Children: 50, Spare: 4}, apache, 32, scaleDecision{Spawn: 32, Ramp: 32}},
		{"apache: spawn limited by max", scaleState{Children: 254, Spare: 0}, apache, 8, scaleDecision{Spawn: 2, Ramp: 16}},
		{"apache: at max", scaleState{Children: 256, Spare: 0}, apache, 8, scaleDecision{Ramp: 1, AtMax: true}},
		{"apache: too many idle retires one", scaleState{Children: 30, Spare: 20}, apache, 4, scaleDecision{Retire: 1, Ramp: 1}},
		{"apache: starting counts as spare", scaleState{Children: 12, Spare: 5}, apache, 2, scaleDecision{Ramp: 1}},
		{"spamd: no idle adds one", scaleState{Children: 2, Spare: 0}, spamd, 1, scaleDecision{Spawn: 1, Ramp: 2}},
		{"spamd: at max-children", scaleState{Children: 5, Spare: 0}, spamd, 1, scaleDecision{Ramp: 1, AtMax: true}},
		{"spamd: too many idle removes one", scaleState{Children: 4, Spare: 3}, spamd, 1, scaleDecision{Retire: 1, Ramp: 1}},
		{"spamd: never below min-children", scaleState{Children: 1, Spare: 3}, scaleLimits{MinChildren: 1, MaxChildren: 5, MinSpare: 0, MaxSpare: 2}, 1, scaleDecision{Ramp: 1}},
		{"refill to min-children at once", scaleState{Children: 0}, scaleLimits{MinChildren: 4, MaxChildren: 8, MinSpare: 1, MaxSpare: 4}, 1, scaleDecision{Spawn: 4, Ramp: 2}},
		{"queue counts against spare", scaleState{Children: 4, Spare: 0, Queued: 20}, scaleLimits{MaxChildren: 32, MinSpare: 1, MaxSpare: 4}, 1, scaleDecision{Spawn: 21, Ramp: 2}},
		{"queue beyond max", scaleState{Children: 30, Spare: 0, Queued: 20}, scaleLimits{MaxChildren: 32, MinSpare: 1, MaxSpare: 4}, 1, scaleDecision{Spawn: 2, Ramp: 2}},
		{"queue absorbed by idle", scaleState{Children: 8, Spare: 6, Queued: 3}, scaleLimits{MaxChildren: 32, MinSpare: 2, MaxSpare: 8}, 1, scaleDecision{Ramp: 1}},
		{"zero ramp treated as 1", scaleState{Children: 1, Spare: 0}, spamd, 0, scaleDecision{Spawn: 1, Ramp: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.s, tc.l, tc.ramp); got != tc.want {
				t.Errorf("decide(%+v, %+v, %d) = %+v, want %+v", tc.s, tc.l, tc.ramp, got, tc.want)
			}
		})
	}
}

// TestScaleConverges runs the scaler against a simulated pool under a
// constant load and checks it settles between the spare bounds without
// flapping.
func TestScaleConverges(t *testing.T) {
	l := scaleLimits{MinChildren: 1, MaxChildren: 64, MinSpare: 2, MaxSpare: 6}
	for _, load := range []int{0, 1, 10, 40, 64, 100} {
		children, ramp, changes := 2, 1, 0
		for period := 0; period < 100; period++ {
			busy := min(load, children)
			queued := max(load-children, 0)
			d := decide(scaleState{Children: children, Spare: children - busy, Queued: queued}, l, ramp)
			ramp = d.Ramp
			children += d.Spawn - d.Retire
			if period >= 50 && d.Spawn+d.Retire > 0 {
				changes++
			}
		}
		spare := children - min(load, children)
		if changes > 0 || children > l.MaxChildren || (load < l.MaxChildren-l.MinSpare && (spare < l.MinSpare || spare > l.MaxSpare)) {
			t.Errorf("load %d: settled at %d children (%d spare), %d changes in the last 50 periods", load, children, spare, changes)
		}
	}
}
