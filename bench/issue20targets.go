package main

import (
	"fmt"
	"strings"
)

// writeIssue20Targets writes issue 20's targets next to what was measured,
// one row each, "not measured" where a server or load did not run: the
// default pool at least 0.95× exclusive mode on every load with the
// built-in handler and with WSGI, the WSGI default pool at least 1.8×
// gunicorn sync and 1.0× uWSGI at close-8, and the default pool's master
// CPU per connection at most 5 µs on the one-request-per-connection loads.
// Targets are reported, not asserted; ratios use peerRatioRow (psgi.go).
func (r report) writeIssue20Targets(b *strings.Builder) {
	b.WriteString("#### Targets (issue 20)\n\n| target | measured | met |\n|---|---|---|\n")
	for _, pair := range [][2]string{{"actd-filter-http", "actd-exclusive"}, {"wsgi-actd-filter-http", "wsgi-actd-exclusive"}} {
		for _, name := range issue20Loads {
			r.peerRatioRow(b, pair[0], pair[1], name, defaultVsExclusive)
		}
	}
	r.peerRatioRow(b, "wsgi-actd-filter-http", "gunicorn", "close-8", wsgiVsGunicorn)
	r.peerRatioRow(b, "wsgi-actd-filter-http", "uwsgi", "close-8", wsgiVsUwsgi)
	for _, server := range []string{"actd-filter-http", "wsgi-actd-filter-http"} {
		for _, name := range issue20Loads {
			if l, _ := loadByName(name); !l.keepAlive {
				r.masterCPURow(b, server, name, fastPathMasterCPU)
			}
		}
	}
	b.WriteString("\n")
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
