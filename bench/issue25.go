package main

import (
	"flag"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Issue 25's measurement: what the access log costs. The default pool
// (dispatch, --accept-filter http) with the built-in handler, the Go
// worker library's fd path, without an access log (actd-filter-http) and
// with one to a file (actd-accesslog-file), interleaved in one run. `go
// run ./bench -issue25` runs only this and rewrites only its section of
// docs/benchmarks.md.

// issue25Servers are the servers of the measurement: off, then on.
var issue25Servers = []string{"actd-filter-http", "actd-accesslog-file"}

// issue25Loads are its loads: close-8 is the target's.
var issue25Loads = []string{"close-8", "keepalive-8"}

// accessLogVsOff is the target: requests/s with the file access log over
// without, close-8, at least.
const accessLogVsOff = 0.95

// Markers around issue 25's part of docs/benchmarks.md.
const (
	issue25Begin = "<!-- bench:issue25:begin: written by `go run ./bench -issue25` (and by a full run); edits up to bench:issue25:end are overwritten -->"
	issue25End   = "<!-- bench:issue25:end -->"
)

// issue25Flags are the settings -issue25 gives the flags the command line
// does not set.
var issue25Flags = map[string]string{
	"servers":  strings.Join(issue25Servers, ","),
	"loads":    strings.Join(issue25Loads, ","),
	"pool":     "4",
	"duration": "2s",
	"idle":     "0",
	"slow":     "",
	"ramp":     "",
	"plot":     "",
}

func init() {
	allServers = append(allServers, "actd-accesslog-file")
	serverHow["actd-accesslog-file"] = "`actd --accept dispatch --accept-filter http --access-log FILE`: the default pool with the built-in handler, one access-log line per request to a file (issue 25)"
}

// setIssue25 sets every flag of issue25Flags that the command line did
// not. It returns an error if a value does not parse.
func setIssue25(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, value := range issue25Flags {
		if !set[name] {
			if err := fs.Set(name, value); err != nil {
				return fmt.Errorf("-issue25: -%s %q: %w", name, value, err)
			}
		}
	}
	return nil
}

// accessLogCommand runs the default pool with the access log in a file of
// s.dir. It returns an error if actd did not build.
func accessLogCommand(t *tools, s setup) (*exec.Cmd, error) {
	cmd, err := actdCommand(t, "dispatch", false, s)
	if cmd != nil {
		cmd.Args = append(cmd.Args, "--accept-filter", "http", "--access-log", s.dir+"/access.log")
	}
	return cmd, err
}

// measuredIssue25 reports whether the run measured the access-log server.
func (r report) measuredIssue25() bool {
	return slices.ContainsFunc(r.cells, func(c cell) bool { return c.server == "actd-accesslog-file" })
}

// issue25Markdown renders issue 25's section, markers included.
func (r report) issue25Markdown() string {
	var b strings.Builder
	o := r.opts
	b.WriteString(issue25Begin + "\n\n")
	fmt.Fprintf(&b, "Command: `go run ./bench -issue25` or a full run (this one: %d interleaved rounds of %v warm-up and a %v run per server; %d processes per server; commit %s, %s, %s CPUs). The whole run took %s.\n\n",
		o.runs, o.warmup, o.duration, o.pool, r.factValue("commit"), r.factValue("date"), r.factValue("nproc"), r.elapsed.Round(time.Second))
	b.WriteString("Off: `actd-filter-http` (the default pool, built-in handler); on: `actd-accesslog-file`, the same with `--access-log FILE` in the default format.\n\n")
	t := mdTable{head: []string{"load", "off", "on", "on / off"}}
	for _, name := range issue25Loads {
		if !slices.Contains(o.loads, name) {
			continue
		}
		off, on := r.medianRate("actd-filter-http", name), r.medianRate("actd-accesslog-file", name)
		t.add(name, r.rateText("actd-filter-http", name), r.rateText("actd-accesslog-file", name), times(on, off))
	}
	t.write(&b)
	b.WriteString("Requests/s: median of the rounds; the ratio of the medians.\n\n#### Target (issue 25)\n\n| target | measured | met |\n|---|---|---|\n")
	r.peerRatioRow(&b, "actd-accesslog-file", "actd-filter-http", "close-8", accessLogVsOff)
	b.WriteString("\n" + issue25End + "\n")
	return b.String()
}
