package main

import (
	"fmt"
	"time"
)

// The PROXY protocol's cost is CPU: reading and checking a header per
// connection. On the shared 2-CPU machine one server's requests/s swing
// by ±20% between rounds, far more than the 5% the target allows, mostly
// with the share of the CPUs the server gets. The CPU time the server
// spends per request does not count time spent waiting for a CPU, so
// issue 24's target is judged by it (servercpu.go: each server's own
// cgroup, in ns or µs), beside the requests/s. Contention still moves
// it (in a first run, the rounds with the fewest requests/s spent the
// most CPU per request, for Go and Python alike), so it is read with both
// pools of a pair loaded at once (issue24together.go): each round gives
// a ratio with / without measured in one time window, and the cost is
// the median of those paired ratios. (A ratio of the two sides' medians
// would mix rounds: one round's contention on one side against
// another's on the other; on this machine it moved by ±3% between runs
// where the paired median moved less.) The range of the paired ratios
// shows how much they still move.

// perRequest returns cpu over requests in microseconds, and false if
// there is no CPU figure (known is false) or no request.
func perRequest(cpu time.Duration, known bool, requests int) (float64, bool) {
	if !known || requests <= 0 {
		return 0, false
	}
	return float64(cpu) / float64(time.Microsecond) / float64(requests), true
}

// proxyCost is the PROXY protocol's cost for one worker kind at
// close-8, from the runs of its pool without and with a header.
type proxyCost struct {
	without, with []float64 // server µs per request of each run that has one
	pairs         []float64 // with / without of the two runs of each round that measured both
}

// newProxyCost collects the server CPU per request of the runs of the
// pool without (plain) and with a PROXY header (proxy), and pairs the
// runs measured in the same round.
func newProxyCost(plain, proxy []issue24Run) proxyCost {
	var c proxyCost
	byRound := map[int]float64{}
	for _, m := range plain {
		if us, ok := m.serverPerRequest(); ok {
			c.without = append(c.without, us)
			byRound[m.round] = us
		}
	}
	for _, m := range proxy {
		us, ok := m.serverPerRequest()
		if !ok {
			continue
		}
		c.with = append(c.with, us)
		if base, ok := byRound[m.round]; ok && base > 0 {
			c.pairs = append(c.pairs, us/base)
		}
	}
	return c
}

// ratio returns the median of the paired rounds' ratios with / without
// (µs per request), and false if no round measured both.
func (c proxyCost) ratio() (float64, bool) {
	if len(c.pairs) == 0 {
		return 0, false
	}
	return summarize(c.pairs).median, true
}

// met returns whether the cost (ratio − 1) is under proxyCostMax, and
// false for measured if the ratio is missing.
func (c proxyCost) met() (ok, measured bool) {
	r, measured := c.ratio()
	return measured && r-1 < proxyCostMax, measured
}

// ratioText is the paired rounds' median ratio with their range, e.g.
// "1.02× (pairs 0.97–1.06)", or "–".
func (c proxyCost) ratioText() string {
	r, ok := c.ratio()
	if !ok {
		return "–"
	}
	if len(c.pairs) < 2 {
		return fmt.Sprintf("%.2f×", r)
	}
	s := summarize(c.pairs)
	return fmt.Sprintf("%.2f× (pairs %.2f–%.2f)", r, s.min, s.max)
}

// costText is the cost, ratio − 1, as a signed percentage, or "–".
func (c proxyCost) costText() string {
	r, ok := c.ratio()
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*(r-1))
}
