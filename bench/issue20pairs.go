package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// Issue 20's side-by-side targets, each judged with its two servers
// loaded together (together.go): the same load from a wrk each, in the
// same time window, so both get the shared machine under the same
// contention, and a round's ratio is not moved by what the machine did
// between two runs (one server's requests/s alone swing by ±15-20%
// between rounds here). Each server's CPU per request comes from its own
// cgroup in the same runs. measureLoad measures the pairs of its load in
// each of the first -pair-runs rounds, after that round's runs alone.

// ratioTarget is one of issue 20's side-by-side targets: server's
// requests/s at least want times peer's, under load.
type ratioTarget struct {
	server, peer, load string
	want               float64
}

// issue20RatioTargets returns issue 20's side-by-side targets in table
// order: the default pool at least 0.95× exclusive mode on every load,
// with the built-in handler and with WSGI; the WSGI default pool at least
// 1.8× gunicorn sync and 1.0× uWSGI at close-8.
func issue20RatioTargets() []ratioTarget {
	var targets []ratioTarget
	for _, pair := range [][2]string{{"actd-filter-http", "actd-exclusive"}, {"wsgi-actd-filter-http", "wsgi-actd-exclusive"}} {
		for _, name := range issue20Loads {
			targets = append(targets, ratioTarget{pair[0], pair[1], name, defaultVsExclusive})
		}
	}
	return append(targets,
		ratioTarget{"wsgi-actd-filter-http", "gunicorn", "close-8", wsgiVsGunicorn},
		ratioTarget{"wsgi-actd-filter-http", "uwsgi", "close-8", wsgiVsUwsgi})
}

// String is the target as the tables name it.
func (t ratioTarget) String() string {
	return fmt.Sprintf("%s ≥ %.2f× %s, %s", t.server, t.want, t.peer, t.load)
}

// pairCell is a target's two servers loaded together under its load.
type pairCell struct {
	target ratioTarget
	runs   [][2]runMeasure // one per round that measured both: [0] the server's, [1] the peer's
	failed int             // rounds that measured nothing
	err    error           // why the last of them did not
}

// pairsFor returns a pairCell for each target under l whose two servers
// the run measures (servers), in target order.
func pairsFor(servers []string, l load) []pairCell {
	var pairs []pairCell
	for _, t := range issue20RatioTargets() {
		if t.load == l.name && slices.Contains(servers, t.server) && slices.Contains(servers, t.peer) {
			pairs = append(pairs, pairCell{target: t})
		}
	}
	return pairs
}

// measure loads p's two servers (procs, by name; nil if one did not
// start) together for one round: o.warmup of warm-up, then a run of
// o.duration, the server's wrk started first in even rounds (counted
// from 0) and the peer's in odd ones, so that neither gets the head
// start every time. A round that fails is counted in p.failed.
func (p *pairCell) measure(ctx context.Context, o options, w wrkRunner, l load, procs map[string]*cpuServer, round int) {
	servers := [2]*cpuServer{procs[p.target.server], procs[p.target.peer]}
	if servers[0] == nil || servers[1] == nil || ctx.Err() != nil {
		return
	}
	first := round % 2
	_, err := wrkPair(ctx, w, servers, l, first, o.warmup)
	var runs [2]runMeasure
	if err == nil {
		runs, err = wrkPair(ctx, w, servers, l, first, o.duration)
	} else {
		err = fmt.Errorf("warm-up: %w", err)
	}
	if err != nil {
		p.failed, p.err = p.failed+1, err
		fmt.Fprintf(os.Stderr, "  round %d together: %s: FAILED: %v\n", round+1, p.target, firstLineOf(err.Error()))
		return
	}
	p.runs = append(p.runs, runs)
	fmt.Fprintf(os.Stderr, "  round %d together: %s; %s\n", round+1, pairLine(p.target.server, runs[0]), pairLine(p.target.peer, runs[1]))
}

// wrkPair loads both servers with l for d at once (loadPair), a wrk
// each, servers[first]'s started first. It returns each server's run
// (wrk's summary and the server's CPU meanwhile), or an error if either
// wrk failed or got no answer.
func wrkPair(ctx context.Context, w wrkRunner, servers [2]*cpuServer, l load, first int, d time.Duration) ([2]runMeasure, error) {
	var runs [2]runMeasure
	var errs [2]error
	use := loadPair(servers, first, func(k int) func() {
		wait, err := w.start(ctx, servers[k].url(), l, d)
		if err != nil {
			errs[k] = err
			return func() {}
		}
		return func() { runs[k].wrk, errs[k] = wait() }
	})
	for k := range runs {
		runs[k].serverCPU, runs[k].serverKnown = use[k].cpu, use[k].known
		if errs[k] == nil && runs[k].wrk.requests == 0 {
			errs[k] = errors.New("nothing answered")
		}
		if errs[k] != nil {
			errs[k] = fmt.Errorf("%s: %w", servers[k].name, errs[k])
		}
	}
	return runs, errors.Join(errs[0], errs[1])
}

// pairLine is one server's part of a together run's progress line.
func pairLine(server string, m runMeasure) string {
	us, ok := m.serverPerRequest()
	return loadLine(server, m.wrk.rate(), us, ok)
}
