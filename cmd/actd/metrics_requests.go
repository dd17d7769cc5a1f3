package main

import (
	"strconv"

	"github.com/actd/actd/prefork"
	"github.com/actd/actd/protocol"
)

// writeRequestMetrics writes what the children tallied (protocol Tally):
// requests by status code, a counter labelled code ("404", or a class
// such as "5xx" for a code the tally does not name, or "other"), and their
// durations as a histogram. Codes not counted yet have no sample; nothing
// is written before a child sent a tally.
func writeRequestMetrics(mw metricsWriter, s prefork.Snapshot) {
	r := s.Requests
	if r == nil {
		return
	}
	name := mw.family("http_requests_total", "counter",
		"HTTP requests answered by children, by status code (a class such as 5xx for codes not listed), as they tallied them.")
	for i := range protocol.NumTallyCodes {
		label := protocol.TallyLabel(i)
		if n, ok := r.Codes[label]; ok {
			mw.sample(name, n, "code", label)
		}
	}
	name = mw.family("http_request_duration_seconds", "histogram",
		"Time from a request's first byte read to its answer written, as children tallied it.")
	for i, n := range r.Buckets {
		le := "+Inf"
		if i < len(r.Bounds) {
			le = strconv.FormatFloat(r.Bounds[i], 'g', -1, 64)
		}
		mw.sample(name+"_bucket", n, "le", le)
	}
	mw.sample(name+"_sum", r.Seconds)
	mw.sample(name+"_count", r.Total)
}
