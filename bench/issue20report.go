package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Markers around the part of docs/benchmarks.md that issue 20's comparison
// rewrites: `go run ./bench -issue20` writes only this part, a full run
// this part as well as the results section.
const (
	issue20Begin = "<!-- bench:issue20:begin: written by `go run ./bench -issue20` (and by a full run); edits up to bench:issue20:end are overwritten -->"
	issue20End   = "<!-- bench:issue20:end -->"
)

// Issue 20's targets.
const (
	defaultVsExclusive = 0.95 // the default pool's requests/s over exclusive mode's, every load, at least
	wsgiVsGunicorn     = 1.8  // the WSGI default pool over gunicorn sync, close-8, at least
	wsgiVsUwsgi        = 1.0  // the WSGI default pool over uWSGI, close-8, at least
	fastPathMasterCPU  = 5.0  // µs of master CPU per connection on the fast path, at most
)

// issue20Labels are the servers' short names in the comparison's tables.
var issue20Labels = map[string]string{
	"actd-exclusive": "exclusive", "actd-dispatch": "dispatch", "actd-filter-http": "default", "actd-filter-http-master": "master-first",
	"wsgi-actd-exclusive": "actd exclusive", "wsgi-actd-dispatch": "actd dispatch", "wsgi-actd-filter-http": "actd default",
	"gunicorn": "gunicorn sync", "uwsgi": "uWSGI",
}

// label is server's short name in the comparison's tables.
func label(server string) string {
	if l, ok := issue20Labels[server]; ok {
		return l
	}
	return server
}

// issue20LoadsRun returns the comparison's loads that the run measured,
// in table order.
func (r report) issue20LoadsRun() []string {
	var names []string
	for _, name := range issue20Loads {
		if slices.Contains(r.opts.loads, name) {
			names = append(names, name)
		}
	}
	return names
}

// measuredIssue20 reports whether the run measured any server of the
// comparison that only it has (the default pool's master-first twin or
// the WSGI default pool), so a run without them leaves the section alone.
func (r report) measuredIssue20() bool {
	return slices.ContainsFunc(r.cells, func(c cell) bool {
		return c.server == "actd-filter-http-master" || c.server == "wsgi-actd-filter-http"
	})
}

// issue20Markdown renders issue 20's section, markers included: how it
// was run, requests/s and master CPU per load for the Go worker and for
// WSGI, the targets, and the comparison's failures.
func (r report) issue20Markdown() string {
	var b strings.Builder
	b.WriteString(issue20Begin + "\n\n")
	o := r.opts
	fmt.Fprintf(&b, "Command: `go run ./bench -issue20` or a full run (this one: %d interleaved rounds of %v warm-up and a %v run per server; %s%d processes per server, one per connection for keep-alive; commit %s, %s, %s CPUs). The whole run took %s.\n\n",
		o.runs, o.warmup, o.duration, r.pairRounds(), o.pool, r.factValue("commit"), r.factValue("date"), r.factValue("nproc"), r.elapsed.Round(time.Second))
	b.WriteString("The master-first path is measured with `actd-filter-http-master`: the same pool and built-in handler, the worker started as `env ACTD_PROTOCOL=3 actd child http`, so it says hello as a revision-3 worker (no `screen`) and the master accepts and holds every connection. No flag of actd and no code of the product is added for it.\n\n")
	b.WriteString("#### Built-in handler (Go worker library)\n\nexclusive: `actd-exclusive`; dispatch: `actd-dispatch`; default: `actd-filter-http` (dispatch, `--accept-filter http`, children first); master-first: `actd-filter-http-master`.\n\n")
	goRatios := [][2]string{{"actd-filter-http", "actd-exclusive"}, {"actd-filter-http-master", "actd-exclusive"}}
	r.rateTable(&b, issue20Go, goRatios)
	r.serverCPUTable(&b, issue20Go, goRatios)
	r.cpuTable(&b, issue20Go[:4])
	b.WriteString("#### WSGI hello application (`python3 -m actd.wsgi`)\n\nactd exclusive: `wsgi-actd-exclusive`; actd dispatch: `wsgi-actd-dispatch`; actd default: `wsgi-actd-filter-http`; gunicorn sync: `gunicorn`; uWSGI: `uwsgi` (`--http-socket`); the same application and process count.\n\n")
	wsgiRatios := [][2]string{{"wsgi-actd-filter-http", "wsgi-actd-exclusive"}, {"wsgi-actd-filter-http", "gunicorn"}, {"wsgi-actd-filter-http", "uwsgi"}}
	r.rateTable(&b, issue20WSGI, wsgiRatios)
	r.serverCPUTable(&b, issue20WSGI, wsgiRatios)
	r.cpuTable(&b, issue20WSGI[:3])
	r.writePairs(&b)
	r.writeIssue20Targets(&b)
	b.WriteString(issue20End + "\n")
	return b.String()
}

// pairRounds says how the target pairs were loaded together, for the
// section's first line, or "" if none was.
func (r report) pairRounds() string {
	if len(r.pairs) == 0 || r.opts.pairRuns == 0 {
		return ""
	}
	o := r.opts
	after := fmt.Sprintf("the first %d of them", min(o.runs, o.pairRuns))
	if o.runs >= o.pairRuns {
		after = "each"
	}
	return fmt.Sprintf("%d round%s of each target pair's two servers loaded at once, %v of warm-up and a %v run, %s after that round's runs alone; ",
		o.pairRuns, plural(o.pairRuns), o.warmup, o.duration, after)
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// rateTable writes the median requests/s of servers for each load of
// the comparison, and each pair's ratio (first over second).
func (r report) rateTable(b *strings.Builder, servers []string, ratios [][2]string) {
	r.figureTable(b, servers, ratios, "", r.medianRate, "%.0f")
	b.WriteString("Requests/s: each server loaded alone, median of the rounds; ratios of the medians.\n\n")
}

// serverCPUTable writes the median server CPU per request of servers
// (serverCPU) for each load of the comparison, and each pair's ratio.
func (r report) serverCPUTable(b *strings.Builder, servers []string, ratios [][2]string) {
	r.figureTable(b, servers, ratios, ": server µs", r.serverCPU, "%.1f")
	b.WriteString("Server µs: CPU time (user and system) of the whole server, master and children or workers, during a run alone (the runs of the table above) over the requests it answered, median of the rounds; ratios of the medians. Read before and after each run from " +
		r.cpuFrom() + ". A ratio under 1× is a server that spends less CPU per request than the other.\n\n")
}

// figureTable writes a row per load of the comparison: figure (0 if not
// measured, shown as "–") of each server formatted with verb, under its
// label and suffix, then each pair's ratio (first over second; "–" if
// either is missing).
func (r report) figureTable(b *strings.Builder, servers []string, ratios [][2]string, suffix string, figure func(server, load string) float64, verb string) {
	var head []string
	for _, s := range servers {
		head = append(head, label(s)+suffix)
	}
	for _, p := range ratios {
		head = append(head, label(p[0])+" / "+label(p[1]))
	}
	r.loadTable(head, func(name string) []string {
		var row []string
		for _, s := range servers {
			row = append(row, figureText(figure(s, name), verb))
		}
		for _, p := range ratios {
			row = append(row, ratioText(figure(p[0], name), figure(p[1], name)))
		}
		return row
	}).write(b)
}

// cpuTable writes the median master CPU per connection (per request for
// keep-alive) of the actd servers for each load, and for those whose
// master may hold connections, the share of the run's connections it held.
func (r report) cpuTable(b *strings.Builder, servers []string) {
	var head []string
	for _, s := range servers {
		head = append(head, label(s)+": master µs")
	}
	held := slices.DeleteFunc(slices.Clone(servers), func(s string) bool { return !countsHeld(s) })
	for _, s := range held {
		head = append(head, label(s)+": held by the master")
	}
	r.loadTable(head, func(name string) []string {
		var row []string
		for _, s := range servers {
			row = append(row, r.masterCPUText(s, name))
		}
		for _, s := range held {
			row = append(row, r.heldText(s, name))
		}
		return row
	}).write(b)
	b.WriteString("Master µs: CPU time of actd's master during a run over the connections the kernel accepted (per request for keep-alive), median of the rounds. Held by the master: connections it held from their start (`actd status`, `held in all`) over those accepted, all rounds together; about 0% is the children-first path, 100% the master-first one (– for keep-alive, whose connections open before the run).\n\n")
}

// loadTable is a table with a row per load of the comparison that the run
// measured: the load's name, then row's cells for it, under head.
func (r report) loadTable(head []string, row func(load string) []string) mdTable {
	t := mdTable{head: append([]string{"load"}, head...)}
	for _, name := range r.issue20LoadsRun() {
		t.add(append([]string{name}, row(name)...)...)
	}
	return t
}

// figureText is v formatted with verb, or "–" if it is 0 (not measured).
func figureText(v float64, verb string) string {
	if v > 0 {
		return fmt.Sprintf(verb, v)
	}
	return "–"
}

// rateText is server's median requests/s under a load, or "–".
func (r report) rateText(server, loadName string) string {
	return figureText(r.medianRate(server, loadName), "%.0f")
}

// serverCPU returns the median over runs of server's whole CPU time per
// request under a load (runMeasure.serverPerRequest), in µs, or 0 if it
// did not run or no run read it.
func (r report) serverCPU(server, loadName string) float64 {
	c := r.cellFor(server, loadName)
	if c == nil {
		return 0
	}
	var xs []float64
	for _, m := range c.runs {
		if us, ok := m.serverPerRequest(); ok {
			xs = append(xs, us)
		}
	}
	return summarize(xs).median
}

// cpuFrom says where the servers' CPU time was read (servercpu.go's
// cpuFrom) in the run's cells of the comparison.
func (r report) cpuFrom() string {
	var sources []cpuSource
	for _, c := range r.cells {
		if c.err == nil && len(c.runs) > 0 && slices.Contains(r.issue20LoadsRun(), c.load.name) {
			sources = append(sources, c.cpu)
		}
	}
	return cpuFrom(sources)
}

// masterCPU returns the median over runs of server's master CPU per
// connection (per request for keep-alive) under a load, in µs, and false
// if it did not run.
func (r report) masterCPU(server, loadName string) (float64, bool) {
	c := r.cellFor(server, loadName)
	if c == nil {
		return 0, false
	}
	return c.medianOf(func(m runMeasure) float64 { return m.masterCPUPer(c.load) }), true
}

// masterCPUText is masterCPU rendered, or "–".
func (r report) masterCPUText(server, loadName string) string {
	if v, ok := r.masterCPU(server, loadName); ok {
		return fmt.Sprintf("%.1f", v)
	}
	return "–"
}

// heldText is the share of server's connections its master held under a
// load, over every counted run, or "–" if none was counted.
func (r report) heldText(server, loadName string) string {
	c := r.cellFor(server, loadName)
	if c == nil {
		return "–"
	}
	var held, conns uint64
	for _, m := range c.runs {
		if _, ok := m.heldShare(); ok {
			held, conns = held+m.held, conns+m.conns
		}
	}
	if conns == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(held)/float64(conns))
}
