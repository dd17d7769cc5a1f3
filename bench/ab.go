package main

import (
	"fmt"
	"slices"
	"strings"
)

// beforeSuffix marks a server that runs the actd built from -actd-before
// (another checkout) instead of the one under test, so two builds are
// measured in the same interleaved rounds.
const beforeSuffix = "@before"

// actdServers are the servers that have an @before twin.
var actdServers = []string{"actd-dispatch", "actd-exclusive"}

// knownServers returns every server name the suite accepts: allServers, and
// with withBefore the @before twins of the actd servers.
func knownServers(withBefore bool) []string {
	if !withBefore {
		return allServers
	}
	names := slices.Clone(allServers)
	for _, s := range actdServers {
		names = append(names, s+beforeSuffix)
	}
	return names
}

// splitBuild splits a server name into the server it runs and whether it
// runs the @before build: "actd-dispatch@before" is ("actd-dispatch", true).
func splitBuild(name string) (base string, before bool) {
	return strings.CutSuffix(name, beforeSuffix)
}

// addBefore returns names with the @before twin of each actd server placed
// right after it, unless names already lists that twin.
func addBefore(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, n)
		twin := n + beforeSuffix
		if slices.Contains(actdServers, n) && !slices.Contains(names, twin) {
			out = append(out, twin)
		}
	}
	return out
}

// writeAB writes, for a run with -actd-before, each actd server's median
// requests/s and p99 next to its @before twin's for every load, their
// ratio, the ratio's range over the rounds, and the idle masters'
// wake-ups and threads. It writes nothing for a run without twins.
func (r report) writeAB(b *strings.Builder) {
	if r.opts.actdBefore == "" {
		return
	}
	fmt.Fprintf(b, "### Before and after\n\nafter: the actd under test (%s); before: the actd built from `-actd-before` (%s). Medians of the same interleaved rounds; after/before per round: the range of the ratio within each round.\n\n",
		r.factValue("commit"), r.factValue("actd before"))
	b.WriteString("| load | server | before req/s | after req/s | after/before | per round | before p99 ms | after p99 ms |\n|---|---|---|---|---|---|---|---|\n")
	for _, name := range r.opts.loads {
		for _, srv := range actdServers {
			after, before := r.cellFor(srv, name), r.cellFor(srv+beforeSuffix, name)
			if after == nil || before == nil {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %s |\n", name, srv, abRow(*before, *after))
		}
	}
	b.WriteString("\n")
	r.writeIdleAB(b)
}

// abRow renders the figures of one before/after pair of cells.
func abRow(before, after cell) string {
	rb, ra := before.medianOf(rateOf), after.medianOf(rateOf)
	ratio := "–"
	if rb > 0 {
		ratio = fmt.Sprintf("%.2f", ra/rb)
	}
	var rounds []float64
	for i := range min(len(before.runs), len(after.runs)) {
		if br := before.runs[i].wrk.rate(); br > 0 {
			rounds = append(rounds, after.runs[i].wrk.rate()/br)
		}
	}
	return fmt.Sprintf("%.0f | %.0f | %s | %s | %.2f | %.2f", rb, ra, ratio, rangeOf(rounds, "%.2f"),
		ms(before.medianOf(p99Of)), ms(after.medianOf(p99Of)))
}

// writeIdleAB writes the idle masters' wake-ups and threads, before and
// after.
func (r report) writeIdleAB(b *strings.Builder) {
	if len(r.idle) == 0 {
		return
	}
	b.WriteString("| idle | before wake-ups/s | after wake-ups/s | before threads | after threads |\n|---|---|---|---|---|\n")
	for _, srv := range actdServers {
		after, before := r.idleFor(srv), r.idleFor(srv+beforeSuffix)
		if after == nil || before == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %.1f | %.1f | %d | %d |\n", srv, before.wakeRate(), after.wakeRate(), before.master.threads, after.master.threads)
	}
	b.WriteString("\n")
}

// cellFor returns the measured cell of server under a load, or nil.
func (r report) cellFor(server, loadName string) *cell {
	for i, c := range r.cells {
		if c.server == server && c.load.name == loadName && c.err == nil && len(c.runs) > 0 {
			return &r.cells[i]
		}
	}
	return nil
}

// idleFor returns server's idle measurement, or nil if it has none.
func (r report) idleFor(server string) *idleMeasure {
	for i, m := range r.idle {
		if m.server == server && m.err == nil {
			return &r.idle[i]
		}
	}
	return nil
}

// factValue returns the value of the machine fact called name, or "unknown".
func (r report) factValue(name string) string {
	for _, f := range r.facts {
		if f.name == name {
			return f.value
		}
	}
	return "unknown"
}

// medianOf returns the median of f over c's runs.
func (c cell) medianOf(f func(runMeasure) float64) float64 {
	xs := make([]float64, len(c.runs))
	for i, m := range c.runs {
		xs[i] = f(m)
	}
	return summarize(xs).median
}

// rateOf is a run's requests/s.
func rateOf(m runMeasure) float64 { return m.wrk.rate() }

// p99Of is a run's p99 latency in seconds.
func p99Of(m runMeasure) float64 { return m.wrk.p99.Seconds() }

// wakeRate is the idle master's wake-ups per second.
func (m idleMeasure) wakeRate() float64 { return float64(m.master.runs) / m.window.Seconds() }

// rangeOf formats the min–max of xs with verb, or "–" for none.
func rangeOf(xs []float64, verb string) string {
	if len(xs) == 0 {
		return "–"
	}
	s := summarize(xs)
	return fmt.Sprintf(verb+"–"+verb, s.min, s.max)
}
