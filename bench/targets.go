package main

import (
	"fmt"
	"strings"
	"time"
)

// idleCPUTarget is the most CPU an idle actd master may use to count as
// "no measurable CPU": 0.1% of one core, less than one 10 ms tick of
// top(1) in 10 s.
const idleCPUTarget = 0.001

// idleWakeTarget is issue 11's bound on an idle actd master's wake-ups per
// second (Apache's parent wakes about once).
const idleWakeTarget = 2.0

// masterRSSTarget is issue 2's bound on the actd master's memory.
const masterRSSTarget = 20 << 20

// writeTargets writes issue 2's performance targets next to what was
// measured. Targets are reported, not asserted.
func (r report) writeTargets(b *strings.Builder) {
	b.WriteString("### Targets (issues 2 and 11)\n\n| target | measured | met |\n|---|---|---|\n")
	for _, name := range []string{"close-1", "close-8", "close-64", "keepalive-8"} {
		r.ratioRow(b, "actd-exclusive", name, 0.95)
	}
	r.ratioRow(b, "actd-dispatch", "close-8", 0.8)
	r.writeGoTargets(b)
	r.writePSGITargets(b)
	for _, mode := range []string{"actd-dispatch", "actd-exclusive"} {
		r.masterRSSRow(b, mode)
		r.idleRow(b, mode)
	}
	r.writeWSGITargets(b)
	b.WriteString("\nRatios compare median requests/s against the baseline in the same run.\n\n")
}

// ratioRow writes server's median rate over the baseline's for a load.
func (r report) ratioRow(b *strings.Builder, server, loadName string, want float64) {
	target := fmt.Sprintf("%s ≥ %.2f× baseline, %s", server, want, loadName)
	got, base := r.medianRate(server, loadName), r.medianRate("baseline", loadName)
	if got == 0 || base == 0 {
		fmt.Fprintf(b, "| %s | not measured | – |\n", target)
		return
	}
	ratio := got / base
	fmt.Fprintf(b, "| %s | %.2f× (%.0f vs %.0f req/s) | %s |\n", target, ratio, got, base, yesNo(ratio >= want))
}

// medianRate returns the median requests/s of server under a load, or 0.
func (r report) medianRate(server, loadName string) float64 {
	for _, c := range r.cells {
		if c.server == server && c.load.name == loadName && c.err == nil && len(c.runs) > 0 {
			rates := make([]float64, len(c.runs))
			for i, m := range c.runs {
				rates[i] = m.wrk.rate()
			}
			return summarize(rates).median
		}
	}
	return 0
}

// masterRSSRow writes the largest master RSS of server over all loads.
func (r report) masterRSSRow(b *strings.Builder, server string) {
	target := server + " master RSS ≤ 20 MB (largest seen under any load)"
	var peak uint64
	for _, c := range r.cells {
		if c.server == server {
			for _, m := range c.runs {
				peak = max(peak, m.peakMaster.rss)
			}
		}
	}
	if peak == 0 {
		fmt.Fprintf(b, "| %s | not measured | – |\n", target)
		return
	}
	fmt.Fprintf(b, "| %s | %.1f MB | %s |\n", target, mb(peak), yesNo(peak <= masterRSSTarget))
}

// idleRow writes the idle CPU and wake-ups of server's master.
func (r report) idleRow(b *strings.Builder, server string) {
	cpuTarget := server + " idle master uses no measurable CPU"
	wakeTarget := fmt.Sprintf("%s idle master wakes at most %.0f times a second (issue 11)", server, idleWakeTarget)
	for _, m := range r.idle {
		if m.server != server || m.err != nil {
			continue
		}
		share := m.master.cpu.Seconds() / m.window.Seconds()
		wakes := float64(m.master.runs) / m.window.Seconds()
		fmt.Fprintf(b, "| %s | %v CPU in %v (%.3f%%) | %s |\n", cpuTarget, m.master.cpu.Round(time.Microsecond), m.window, share*100,
			yesNo(share <= idleCPUTarget))
		fmt.Fprintf(b, "| %s | %.1f wake-ups/s, %d threads | %s |\n", wakeTarget, wakes, m.master.threads, yesNo(wakes <= idleWakeTarget))
		return
	}
	fmt.Fprintf(b, "| %s | not measured | – |\n", cpuTarget)
	fmt.Fprintf(b, "| %s | not measured | – |\n", wakeTarget)
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}
