package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

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

// requestsLine returns the status line of what the children answered:
// how many, by code in the tally's order, and how fast ("6 answered:
// 200 × 3, 404 × 2, 413 × 1; mean 1.2ms, 5 within 5ms"), or "" before
// any child tallied.
func requestsLine(s prefork.Snapshot) string {
	r := s.Requests
	if r == nil {
		return ""
	}
	var codes []string
	for i := range protocol.NumTallyCodes {
		label := protocol.TallyLabel(i)
		if n, ok := r.Codes[label]; ok {
			codes = append(codes, fmt.Sprintf("%s × %d", label, n))
		}
	}
	line := fmt.Sprintf("%d answered", r.Total)
	if len(codes) > 0 {
		line += ": " + strings.Join(codes, ", ")
	}
	if r.Total > 0 && len(r.Buckets) > 0 && len(r.Bounds) > 0 {
		mean := time.Duration(r.Seconds / float64(r.Total) * float64(time.Second))
		fast := time.Duration(r.Bounds[0] * float64(time.Second))
		line += fmt.Sprintf("; mean %v, %d within %v", mean.Round(time.Microsecond), r.Buckets[0], fast)
	}
	return line
}
