package main

import (
	"fmt"
	"strings"
)

// The figures of issue 20's target pairs loaded together
// (issue20pairs.go), and the table that shows them.

// pairFigures are a pair's figures over its rounds: each server's
// requests/s and server µs per request ([0] the server's, [1] the
// peer's), and the server's over the peer's, round by round.
type pairFigures struct {
	rate, us           [2][]float64
	rateRatio, usRatio []float64
}

// figures collects p's figures. A round's µs ratio needs both servers'
// CPU read.
func (p pairCell) figures() pairFigures {
	var f pairFigures
	for _, run := range p.runs {
		var us [2]float64
		var known [2]bool
		for k, m := range run {
			f.rate[k] = append(f.rate[k], m.wrk.rate())
			if us[k], known[k] = m.serverPerRequest(); known[k] {
				f.us[k] = append(f.us[k], us[k])
			}
		}
		if peer := run[1].wrk.rate(); peer > 0 {
			f.rateRatio = append(f.rateRatio, run[0].wrk.rate()/peer)
		}
		if known[0] && known[1] && us[1] > 0 {
			f.usRatio = append(f.usRatio, us[0]/us[1])
		}
	}
	return f
}

// met returns whether the median of p's rounds' requests/s ratios is at
// least the target's, how many rounds' ratios are, and the number of
// rounds; measured is false if no round measured both.
func (p pairCell) met() (ok bool, atTarget, rounds int, measured bool) {
	ratios := p.figures().rateRatio
	if len(ratios) == 0 {
		return false, 0, 0, false
	}
	for _, r := range ratios {
		if r >= p.target.want {
			atTarget++
		}
	}
	return summarize(ratios).median >= p.target.want, atTarget, len(ratios), true
}

// pairedRatioText is the median of the rounds' ratios with their range,
// "0.97× (pairs 0.91–1.02)", only the median for a single round, or "–"
// for none.
func pairedRatioText(ratios []float64) string {
	if len(ratios) == 0 {
		return "–"
	}
	s := summarize(ratios)
	if len(ratios) == 1 {
		return fmt.Sprintf("%.2f×", s.median)
	}
	return fmt.Sprintf("%.2f× (pairs %.2f–%.2f)", s.median, s.min, s.max)
}

// pairFor returns the pair of target, or nil if the run did not load
// its two servers together.
func (r report) pairFor(target ratioTarget) *pairCell {
	for i, p := range r.pairs {
		if p.target == target && len(p.runs) > 0 {
			return &r.pairs[i]
		}
	}
	return nil
}

// writePairs writes a row per target pair loaded together: each server's
// requests/s and server µs per request, and the server's over the
// peer's, with notes on what they measure. It writes nothing if the run
// loaded no pair together.
func (r report) writePairs(b *strings.Builder) {
	if len(r.pairs) == 0 {
		return
	}
	b.WriteString("#### The target pairs loaded together\n\n")
	t := mdTable{head: []string{"server / peer", "load", "requests/s together", "requests/s ratio", "server µs/request together", "µs/request ratio"}}
	for _, p := range r.pairsInTargetOrder() {
		f := p.figures()
		t.add(p.target.server+" / "+p.target.peer, p.target.load,
			spread(f.rate[0], "%.0f")+" / "+spread(f.rate[1], "%.0f"), pairedRatioText(f.rateRatio),
			spread(f.us[0], "%.1f")+" / "+spread(f.us[1], "%.1f"), pairedRatioText(f.usRatio))
	}
	t.write(b)
	b.WriteString(pairNotes)
	for _, p := range r.pairs {
		if p.failed > 0 {
			fmt.Fprintf(b, "%s: %d of %d rounds together failed, the last: %s\n\n", p.target, p.failed, p.failed+len(p.runs), mdEscape(firstLineOf(p.err.Error())))
		}
	}
}

// pairsInTargetOrder returns the run's pairs in the order of
// issue20RatioTargets (they are measured load by load).
func (r report) pairsInTargetOrder() []pairCell {
	var pairs []pairCell
	for _, t := range issue20RatioTargets() {
		for _, p := range r.pairs {
			if p.target == t {
				pairs = append(pairs, p)
			}
		}
	}
	return pairs
}

// pairNotes says what the pair table's figures are and what they
// measure.
const pairNotes = "Each row: the two servers loaded at once, in the same time window, each by its own wrk of the load (the server's wrk started first in odd rounds, the peer's in even ones), one run per round; " +
	"figures of each: median (min–max) of the rounds. Ratios: server over peer round by round, the median of the rounds' ratios and their range (pairs min–max). " +
	"Server µs/request: the CPU time (user and system) of the whole server during that run, over the requests it answered, from its own cgroup as above. " +
	"Loaded together, the scheduler shares the two CPUs between both servers' processes and both clients, so each server's requests/s are lower than alone, " +
	"and the requests/s ratio is what each gets of the same machine under the same contention, side by side in one time window (the drift between rounds moves both alike). " +
	"Where both servers are bound by CPU it estimates the ratio alone; where one alone is bound by something else (round trips, one busy thread), contention moves that bound too, and the two ratios can differ: the tables above give the ratio alone. " +
	"At close-1 (one connection at a time, latency-bound) a server alone leaves most of the machine idle and its requests/s are 1 / its round trip; " +
	"together, each request can wait for a CPU the other server's client and server hold, so the ratio compares the two paths' round trips under that contention, not their unloaded latency. " +
	"The µs/request ratio is what each path costs, whatever the contention gives it.\n\n"
