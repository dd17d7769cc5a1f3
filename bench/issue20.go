package main

import (
	"flag"
	"fmt"
	"strings"
)

// Issue 20's comparison: the default pool (dispatch, --accept-filter http,
// children first) against exclusive and dispatch mode and against the
// master-first path it replaces, with the built-in handler and with the
// WSGI hello application beside gunicorn sync and uWSGI, under the fast
// loads, interleaved in one run. `go run ./bench -issue20` runs only this
// and rewrites only its section of docs/benchmarks.md (issue20report.go).

// issue20Go are the built-in handler's servers, in table order: exclusive,
// dispatch, the default pool, and the default pool's master-first path.
var issue20Go = []string{"actd-exclusive", "actd-dispatch", "actd-filter-http", "actd-filter-http-master"}

// issue20WSGI are the WSGI hello application's servers, in table order:
// actd exclusive, dispatch and the default pool, then the peers.
var issue20WSGI = []string{"wsgi-actd-exclusive", "wsgi-actd-dispatch", "wsgi-actd-filter-http", "gunicorn", "uwsgi"}

// issue20Loads are the loads of the comparison.
var issue20Loads = []string{"close-1", "close-8", "close-64", "keepalive-8"}

// issue20Pool is the process count of the comparison, as in the issue: 4
// children or workers (a keep-alive load gets one per connection, poolFor).
const issue20Pool = 4

// issue20Flags are the settings -issue20 gives the flags that the command
// line does not set: only the comparison's servers and loads, pool 4, 2 s
// runs, the target pairs loaded together in 7 rounds, no idle window,
// slow clients, ramp or plot.
var issue20Flags = map[string]string{
	"servers":   strings.Join(append(append([]string{}, issue20Go...), issue20WSGI...), ","),
	"loads":     strings.Join(issue20Loads, ","),
	"pool":      fmt.Sprint(issue20Pool),
	"duration":  "2s",
	"pair-runs": "7",
	"idle":      "0",
	"slow":      "",
	"ramp":      "",
	"plot":      "",
}

// setIssue20 sets every flag of issue20Flags that the command line did
// not. It returns an error if a value does not parse, which would be a bug
// in issue20Flags.
func setIssue20(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, value := range issue20Flags {
		if set[name] {
			continue
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("-issue20: -%s %q: %w", name, value, err)
		}
	}
	return nil
}
