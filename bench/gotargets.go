package main

import (
	"fmt"
	"strings"
)

// Issue 14's targets for the Go worker library's paths: worker.Serve (a
// net.Conn) against worker.ServeFD (the plain fd), both under actd with
// the same answers, in the same run.
const (
	goConnRateTarget   = 0.95 // requests/s, at least
	goConnMemoryTarget = 1.2  // children's PSS, at most
)

// writeGoTargets writes the Go paths' rows of the targets table: Serve's
// and net/http on Listener's requests/s over ServeFD's for each fast load,
// and their children's memory over ServeFD's.
func (r report) writeGoTargets(b *strings.Builder) {
	for _, name := range []string{"close-1", "close-8", "close-64", "keepalive-8"} {
		r.pathRateRow(b, "actd-go-conn", name, goConnRateTarget)
		r.pathRateRow(b, "actd-go-http", name, 0)
	}
	for _, name := range []string{"close-8", "keepalive-8"} {
		r.pathMemoryRow(b, "actd-go-conn", name, goConnMemoryTarget)
		r.pathMemoryRow(b, "actd-go-http", name, 0)
	}
}

// pathRateRow writes server's median requests/s over actd-go-fd's under a
// load, against want (0: reported, no target).
func (r report) pathRateRow(b *strings.Builder, server, loadName string, want float64) {
	target := fmt.Sprintf("%s / actd-go-fd requests/s, %s", server, loadName)
	if want > 0 {
		target = fmt.Sprintf("%s ≥ %.2f× actd-go-fd, %s", server, want, loadName)
	}
	got, base := r.medianRate(server, loadName), r.medianRate("actd-go-fd", loadName)
	if got == 0 || base == 0 {
		return // not run: no row
	}
	fmt.Fprintf(b, "| %s | %.2f× (%.0f vs %.0f req/s) | %s |\n", target, got/base, got, base, met(got/base >= want, want))
}

// pathMemoryRow writes the median of the children's peak PSS (the tree's
// less the master's) of server over actd-go-fd's under a load, against
// want (0: reported, no target).
func (r report) pathMemoryRow(b *strings.Builder, server, loadName string, want float64) {
	target := fmt.Sprintf("%s / actd-go-fd children PSS, %s", server, loadName)
	if want > 0 {
		target = fmt.Sprintf("%s children PSS ≤ %.1f× actd-go-fd, %s", server, want, loadName)
	}
	got, base := r.childrenPSS(server, loadName), r.childrenPSS("actd-go-fd", loadName)
	if got == 0 || base == 0 {
		return
	}
	fmt.Fprintf(b, "| %s | %.2f× (%.1f vs %.1f MB) | %s |\n", target, got/base, got, base, met(got/base <= want, want))
}

// childrenPSS returns the median over runs of the tree's peak PSS less the
// master's, in MB, or 0 if server did not run under the load.
func (r report) childrenPSS(server, loadName string) float64 {
	for _, c := range r.cells {
		if c.server == server && c.load.name == loadName && c.err == nil && len(c.runs) > 0 {
			v := make([]float64, len(c.runs))
			for i, m := range c.runs {
				v[i] = mb(m.peakTree.pss - min(m.peakTree.pss, m.peakMaster.pss))
			}
			return summarize(v).median
		}
	}
	return 0
}

// met is yesNo for a target, "–" where there is none.
func met(ok bool, want float64) string {
	if want == 0 {
		return "–"
	}
	return yesNo(ok)
}
