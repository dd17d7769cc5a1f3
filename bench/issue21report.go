package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Markers around the part of docs/benchmarks.md that issue 21's
// comparison rewrites.
const (
	issue21Begin = "<!-- bench:issue21:begin: written by `go run ./bench -issue21`; edits up to bench:issue21:end are overwritten -->"
	issue21End   = "<!-- bench:issue21:end -->"
)

// issue21Report is what one -issue21 run measured.
type issue21Report struct {
	results []issue21Result
	timing  issue21Timing
	facts   []fact
	elapsed time.Duration
	load    [2]string // /proc/loadavg at the start and at the end: the machine is shared
}

// write prints the section and, if out is set, puts it between its
// markers in out. It returns the write's error.
func (r issue21Report) write(out string) error {
	text := r.markdown()
	fmt.Print(text)
	if out == "" {
		return nil
	}
	if err := replaceSection(out, section{issue21Begin, issue21End, text}); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

// markdown renders the section, markers included: how it was run, a table
// per case, and the issue's targets for the shipped default.
func (r issue21Report) markdown() string {
	var b strings.Builder
	b.WriteString(issue21Begin + "\n\n")
	facts := report{facts: r.facts}
	fmt.Fprintf(&b, "Command: `go run ./bench -issue21` (commit %s, %s, %s CPUs, shared: load average %s at the start, %s at the end). The whole run took %s.\n\n",
		facts.factValue("commit"), facts.factValue("date"), facts.factValue("nproc"), r.load[0], r.load[1], r.elapsed.Round(time.Second))
	servers := mdTable{head: []string{"server", "how it runs"}}
	for _, s := range issue21Servers {
		servers.add(issue21Labels[s], issue21How[s])
	}
	servers.write(&b)
	t := r.timing
	fmt.Fprintf(&b, "Each server and case: %d good clients alone for %v (unloaded), then %d slow clients, and after %v the good clients again for %v beside them (one request per connection, %v at most each). Slow bodies: `POST /echo` of %d KiB at %d KiB/s, answered with the body (done: echoed exactly). Slow readers: `GET` of a %d MiB response (half generated, half a file) read at %d KiB/s until the window ends (done: served at that pace, at least half of what it allows, every byte right). Children busy: median / max of a look every %v (actd: `actd status --json`; uWSGI: its stats socket; Apache: mod_status's BusyWorkers, less its own; gunicorn: workers holding a client connection). Master: RSS before the slow clients → largest seen; CPU of the main process over the slow clients' time, in %% of one CPU.\n\n",
		goodConc, t.unloaded, issue21Slow, t.ramp, t.window, goodTimeout, t.body>>10, slowBodyRate>>10, issue21Size>>20, slowReadRate>>10, issue21Sample)
	for _, kase := range issue21Cases {
		fmt.Fprintf(&b, "#### %s\n\n", kase)
		r.caseTable(kase).write(&b)
	}
	r.targets().write(&b)
	b.WriteString(issue21End + "\n")
	return b.String()
}

// caseTable is one case's table, a row per server.
func (r issue21Report) caseTable(kase string) mdTable {
	t := mdTable{head: []string{"server", "good answered", "p50 ms", "p99 ms", "unloaded p50 / p99 ms", "children busy",
		"slow clients done", "actd master: bodies / sending", "master RSS MB", "master CPU"}}
	for _, x := range r.results {
		if x.kase != kase {
			continue
		}
		if x.err != nil {
			t.add(issue21Labels[x.server], "failed: "+firstLineOf(x.err.Error()), "", "", "", "", "", "", "", "")
			continue
		}
		total := len(x.loaded) + x.failed
		t.add(issue21Labels[x.server], fmt.Sprintf("%d of %d (%.1f%%)", len(x.loaded), total, 100*ratioOf(len(x.loaded), total)),
			fmt.Sprintf("%.1f", quantile(x.loaded, 0.5)), fmt.Sprintf("%.1f", quantile(x.loaded, 0.99)),
			fmt.Sprintf("%.1f / %.1f", quantile(x.unloaded, 0.5), quantile(x.unloaded, 0.99)),
			x.busyText(), fmt.Sprintf("%d of %d", x.slowOK, issue21Slow), x.heldText(),
			fmt.Sprintf("%.1f → %.1f", mb(x.rssBefore), mb(x.peakRSS())), fmt.Sprintf("%.1f%%", x.cpuShare()))
	}
	return t
}

// busyText is the median and largest count of busy children seen, and
// how many looks failed, or "not seen".
func (x issue21Result) busyText() string {
	seen := x.busySeen()
	if len(seen) == 0 {
		return "not seen"
	}
	text := fmt.Sprintf("%.0f / %.0f", quantile(seen, 0.5), slices.Max(seen))
	if missed := len(x.samples) - len(seen); missed > 0 {
		text += fmt.Sprintf(" (%d of %d looks unanswered)", missed, len(x.samples))
	}
	return text
}

// heldText is, for actd, the most bodies held and responses finished by
// the master at one look; "–" for the others.
func (x issue21Result) heldText() string {
	if x.server != "i21-actd" && x.server != "i21-actd-nohold" {
		return "–"
	}
	var bodies, sending int
	for _, s := range x.samples {
		bodies, sending = max(bodies, s.bodies), max(sending, s.sending)
	}
	return fmt.Sprintf("%d / %d", bodies, sending)
}

// peakRSS is the largest master RSS seen, at least the one before.
func (x issue21Result) peakRSS() uint64 {
	peak := x.rssBefore
	for _, s := range x.samples {
		peak = max(peak, s.rss)
	}
	return peak
}

// cpuShare is the master's CPU over the slow clients' time, in percent of
// one CPU.
func (x issue21Result) cpuShare() float64 {
	if x.span <= 0 {
		return 0
	}
	return 100 * x.masterCPU.Seconds() / x.span.Seconds()
}

// summary is the progress line for x.
func (x issue21Result) summary() string {
	if x.err != nil {
		return fmt.Sprintf("%-11s %-16s FAILED: %v", x.kase, x.server, firstLineOf(x.err.Error()))
	}
	return fmt.Sprintf("%-11s %-16s %d/%d good, p99 %.0f ms (unloaded %.0f ms); busy %s; slow done %d/%d", x.kase, x.server,
		len(x.loaded), len(x.loaded)+x.failed, quantile(x.loaded, 0.99), quantile(x.unloaded, 0.99), x.busyText(), x.slowOK, issue21Slow)
}

// targets is the issue's targets against the shipped default, per case.
func (r issue21Report) targets() mdTable {
	t := mdTable{head: []string{"target (issue 21), actd default", "case", "measured", "met"}}
	for _, x := range r.results {
		if x.server != "i21-actd" || x.err != nil {
			continue
		}
		total := len(x.loaded) + x.failed
		t.add("100% of good requests answered", x.kase, fmt.Sprintf("%d of %d", len(x.loaded), total), yesNo(total > 0 && x.failed == 0))
		p99, base := quantile(x.loaded, 0.99), quantile(x.unloaded, 0.99)
		t.add("p99 at most 2× the unloaded p99", x.kase, fmt.Sprintf("%.1f ms vs %.1f ms (%.2f×)", p99, base, p99/max(base, 0.001)),
			yesNo(base > 0 && p99 <= 2*base))
		t.add("no child busy with a slow client (median busy 0)", x.kase, x.busyText(), yesNo(x.medianBusy() == 0))
		t.add("every slow client done, bytes exact", x.kase, fmt.Sprintf("%d of %d", x.slowOK, issue21Slow), yesNo(x.slowOK == issue21Slow))
		var spooled int64
		for _, s := range x.samples {
			spooled = max(spooled, s.spooled)
		}
		t.add("master memory: the per-connection cost (docs/operations.md: about 0.4 KB held) plus the spooled bytes (memfds and files, outside its RSS)", x.kase,
			fmt.Sprintf("RSS +%.1f KiB per slow client; spooled at most %.1f MiB", float64(x.peakRSS()-x.rssBefore)/1024/issue21Slow, float64(spooled)/(1<<20)), "–")
	}
	return t
}

// medianBusy is the median of the busy counts seen, -1 if none was.
func (x issue21Result) medianBusy() float64 {
	if seen := x.busySeen(); len(seen) > 0 {
		return quantile(seen, 0.5)
	}
	return -1
}

// busySeen is the busy counts of the looks that were answered.
func (x issue21Result) busySeen() []float64 {
	var seen []float64
	for _, s := range x.samples {
		if s.known {
			seen = append(seen, float64(s.busy))
		}
	}
	return seen
}
