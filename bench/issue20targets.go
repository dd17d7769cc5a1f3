package main

import (
	"fmt"
	"strings"
)

// writeIssue20Targets writes issue 20's targets next to what was measured,
// one row each, "not measured" where a server or load did not run. The
// side-by-side targets (issue20RatioTargets) are judged by requests/s
// alone, as the issue states them, with their pair loaded together
// (issue20pairs.go) beside it for context; the default pool's master CPU
// per connection, at most 5 µs on the one-request-per-connection loads,
// by the runs alone. Targets are reported, not asserted.
func (r report) writeIssue20Targets(b *strings.Builder) {
	b.WriteString("#### Targets (issue 20)\n\n")
	t := mdTable{head: []string{"target", "requests/s alone (judged)", "requests/s together", "rounds together at target", "server µs/request together", "met"}}
	for _, target := range issue20RatioTargets() {
		t.add(r.ratioTargetRow(target)...)
	}
	t.write(b)
	b.WriteString(issue20JudgedNotes)
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

// ratioTargetRow is target's row: the ratio of requests/s alone, which
// judges it; the paired ratio of requests/s and how many rounds reach
// the target; the paired ratio of server µs per request.
func (r report) ratioTargetRow(target ratioTarget) []string {
	row := []string{target.String(), "not measured", "not measured", "–", "–", "–"}
	got, base := r.medianRate(target.server, target.load), r.medianRate(target.peer, target.load)
	if got > 0 && base > 0 {
		row[1] = fmt.Sprintf("%.2f× (%.0f vs %.0f)", got/base, got, base)
		row[5] = yesNo(got/base >= target.want)
	}
	if p := r.pairFor(target); p != nil {
		f := p.figures()
		_, at, rounds, _ := p.met()
		row[2], row[3], row[4] = pairedRatioText(f.rateRatio), fmt.Sprintf("%d of %d", at, rounds), pairedRatioText(f.usRatio)
	}
	return row
}

// issue20JudgedNotes says which measure judges the side-by-side targets,
// and why not the pairs loaded together.
const issue20JudgedNotes = "Met: judged by requests/s alone, the measure the issue states its targets in: the ratio of the medians of the interleaved runs alone (the first tables), each server loaded in turn, seconds apart from its peer, on a shared machine that moves one server's requests/s by ±15-20% between rounds. " +
	"Requests/s together and rounds together at target: the target's pair loaded at once (the table above): the median of the rounds' ratios, their range in brackets, and the rounds whose ratio reaches the target. " +
	"They do not judge, because they pull every ratio toward 1×: the two clients (one wrk thread each) get about the same share of the two CPUs, so a server far cheaper per request than its peer cannot be sent proportionally more requests, and a server that spends more than its peer loses less than its cost says (compare each row's µs/request ratio). " +
	"Server µs/request together: the ratio of what each spent per request in the same runs together, the cost behind the ratio (under 1×: the server spends less than its peer).\n\n"

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
