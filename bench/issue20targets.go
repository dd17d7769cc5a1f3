package main

import (
	"fmt"
	"strings"
)

// writeIssue20Targets writes issue 20's targets next to what was measured,
// one row each, "not measured" where a server or load did not run. The
// side-by-side targets (issue20RatioTargets) are judged by their pair
// loaded together (issue20pairs.go), with the ratio alone beside it; the
// default pool's master CPU per connection, at most 5 µs on the
// one-request-per-connection loads, by the runs alone. Targets are
// reported, not asserted.
func (r report) writeIssue20Targets(b *strings.Builder) {
	b.WriteString("#### Targets (issue 20)\n\n")
	t := mdTable{head: []string{"target", "requests/s alone", "requests/s together (judged)", "rounds at target", "server µs/request together", "met"}}
	for _, target := range issue20RatioTargets() {
		t.add(r.ratioTargetRow(target)...)
	}
	t.write(b)
	b.WriteString("Met: judged by requests/s with the target's two servers loaded together (the table above): the median of the rounds' ratios, their range in brackets; rounds at target: the rounds whose ratio reaches it. " +
		"Requests/s alone: the ratio of the medians of the runs alone (the first tables), each server loaded in turn, seconds apart from its peer, on a shared machine that moves one server's requests/s by ±15-20% between rounds; shown for reference. " +
		"Server µs/request together: the ratio of what each spent per request in the same runs together, the cost behind the ratio (under 1×: the server spends less than its peer).\n\n")
	b.WriteString("| target | measured | met |\n|---|---|---|\n")
	for _, server := range []string{"actd-filter-http", "wsgi-actd-filter-http"} {
		for _, name := range issue20Loads {
			if l, _ := loadByName(name); !l.keepAlive {
				r.masterCPURow(b, server, name, fastPathMasterCPU)
			}
		}
	}
	b.WriteString("\n")
}

// ratioTargetRow is target's row: the ratio alone, the paired ratio of
// requests/s and how many rounds reach the target, the paired ratio of
// server µs per request, and whether the paired measure meets it.
func (r report) ratioTargetRow(target ratioTarget) []string {
	row := []string{target.String(), "not measured"}
	if got, base := r.medianRate(target.server, target.load), r.medianRate(target.peer, target.load); got > 0 && base > 0 {
		row[1] = fmt.Sprintf("%.2f× (%.0f vs %.0f)", got/base, got, base)
	}
	p := r.pairFor(target)
	if p == nil {
		return append(row, "not measured", "–", "–", "–")
	}
	f := p.figures()
	ok, at, rounds, _ := p.met()
	return append(row, pairedRatioText(f.rateRatio), fmt.Sprintf("%d of %d", at, rounds), pairedRatioText(f.usRatio), yesNo(ok))
}

// masterCPURow writes whether server's median master CPU per connection
// under a load is at most limit µs.
func (r report) masterCPURow(b *strings.Builder, server, loadName string, limit float64) {
	target := fmt.Sprintf("%s master CPU ≤ %.0f µs per connection, %s", server, limit, loadName)
	got, ok := r.masterCPU(server, loadName)
	if !ok {
		fmt.Fprintf(b, "| %s | not measured | – |\n", target)
		return
	}
	fmt.Fprintf(b, "| %s | %.1f µs (held by the master: %s) | %s |\n", target, got, r.heldText(server, loadName), yesNo(got <= limit))
}
