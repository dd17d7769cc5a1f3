package main

import (
	"fmt"
	"strings"
)

// writeSlow writes the slow-clients table and its targets (issue 13).
func (r report) writeSlow(b *strings.Builder) {
	if len(r.slow) == 0 {
		return
	}
	fmt.Fprintf(b, "### Slow and silent clients\n\n%d connections that send a request head one byte a second and %d silent ones, held open while %d good clients (one request per connection, %v each at most) run for %v; every server has 8 processes. Unloaded: the good clients alone for %v just before.\n\n",
		slowConns, silentConns, goodConc, goodTimeout, slowWindow, unloadedWindow)
	b.WriteString("| server | slow+silent connected | good answered | p50 ms | p99 ms | unloaded p50 / p99 ms | pool halfway through |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.slow {
		if s.err != nil {
			fmt.Fprintf(b, "| %s | failed: %s | | | | | |\n", s.server, mdEscape(firstLineOf(s.err.Error())))
			continue
		}
		total := len(s.loaded) + s.failed
		fmt.Fprintf(b, "| %s | %d | %d of %d (%.1f%%) | %.1f | %.1f | %.1f / %.1f | %s |\n", s.server, s.opened,
			len(s.loaded), total, 100*ratioOf(len(s.loaded), total), quantile(s.loaded, 0.5), quantile(s.loaded, 0.99),
			quantile(s.unloaded, 0.5), quantile(s.unloaded, 0.99), mdEscape(s.pool))
	}
	b.WriteString("\n")
	r.writeSlowTargets(b)
}

// writeSlowTargets writes issue 13's targets next to what was measured.
func (r report) writeSlowTargets(b *strings.Builder) {
	b.WriteString("| target (issue 13) | measured | met |\n|---|---|---|\n")
	for _, s := range r.slow {
		if s.server != "actd-filter-http" || s.err != nil {
			continue
		}
		total := len(s.loaded) + s.failed
		fmt.Fprintf(b, "| actd-filter-http answers 100%% of good requests beside the slow ones | %d of %d | %s |\n",
			len(s.loaded), total, yesNo(total > 0 && s.failed == 0))
		p99, base := quantile(s.loaded, 0.99), quantile(s.unloaded, 0.99)
		fmt.Fprintf(b, "| actd-filter-http p99 at most 2× its unloaded p99 | %.1f ms vs %.1f ms (%.2f×) | %s |\n",
			p99, base, p99/max(base, 0.001), yesNo(base > 0 && p99 <= 2*base))
		fmt.Fprintf(b, "| master memory per held connection (RSS growth / connections held) | %.0f bytes | – |\n", s.heldBytes)
	}
	got, plain := r.medianRate("actd-filter-http", "close-8"), r.medianRate("actd-dispatch", "close-8")
	if got > 0 && plain > 0 {
		fmt.Fprintf(b, "| actd-filter-http close-8 ≥ 0.90× actd-dispatch | %.2f× (%.0f vs %.0f req/s) | %s |\n",
			got/plain, got, plain, yesNo(got/plain >= 0.9))
	} else {
		b.WriteString("| actd-filter-http close-8 ≥ 0.90× actd-dispatch | not measured | – |\n")
	}
	b.WriteString("\n")
}

// ratioOf returns n/total, 0 for no total.
func ratioOf(n, total int) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}
