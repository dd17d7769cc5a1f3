package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wrkScript makes wrk print one machine-readable summary line at the end.
// Latency percentiles are in microseconds; wrk measures each request from
// its first byte written to its response read (connect time excluded).
const wrkScript = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
`

// wrkResult is one wrk run's summary.
type wrkResult struct {
	requests int
	elapsed  time.Duration
	p50, p99 time.Duration
	errors   int // connect + read + write + timeout errors and non-2xx/3xx answers
}

// rate returns requests per second.
func (r wrkResult) rate() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// wrkRunner runs wrk with the suite's script.
type wrkRunner struct {
	script string // path of wrkScript on disk
}

// newWrkRunner writes the script into dir. It returns an error if it cannot.
func newWrkRunner(dir string) (wrkRunner, error) {
	path := filepath.Join(dir, "summary.lua")
	if err := os.WriteFile(path, []byte(wrkScript), 0o644); err != nil {
		return wrkRunner{}, fmt.Errorf("write wrk script: %w", err)
	}
	return wrkRunner{script: path}, nil
}

// run loads url with l's connections for d. Without keep-alive every request
// carries "Connection: close", which makes wrk open a new connection for
// each request. It returns the summary, or an error if wrk fails or prints
// no summary.
func (w wrkRunner) run(ctx context.Context, url string, l load, d time.Duration) (wrkResult, error) {
	wait, err := w.start(ctx, url, l, d)
	if err != nil {
		return wrkResult{}, err
	}
	return wait()
}

// start starts wrk as run does and returns a function that waits for it
// to end and returns what run would. It returns an error if wrk cannot
// start.
func (w wrkRunner) start(ctx context.Context, url string, l load, d time.Duration) (wait func() (wrkResult, error), err error) {
	args := wrkArgs(w.script, url, l, d)
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return func() (wrkResult, error) {
		defer cancel()
		if err := cmd.Wait(); err != nil {
			return wrkResult{}, fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out.Bytes())
		}
		return parseWrk(out.String())
	}, nil
}

// wrkArgs returns the wrk command line for l against url for d: two
// threads (one for a single connection), a 5 s request timeout, and
// "Connection: close" unless l keeps connections alive.
func wrkArgs(script, url string, l load, d time.Duration) []string {
	args := []string{"wrk",
		"-t", strconv.Itoa(min(l.conns, 2)), "-c", strconv.Itoa(l.conns),
		"-d", wrkSeconds(d), "--timeout", "5s", "-s", script,
	}
	if !l.keepAlive {
		args = append(args, "-H", "Connection: close")
	}
	return append(args, url)
}

// wrkSeconds formats d for wrk's -d, which takes whole seconds: rounded
// up, at least one.
func wrkSeconds(d time.Duration) string {
	return strconv.Itoa(max(int((d+time.Second-1)/time.Second), 1)) + "s"
}

// parseWrk finds the BENCH line in wrk's output. It returns an error if
// there is none or a field is malformed.
func parseWrk(out string) (wrkResult, error) {
	for line := range strings.SplitSeq(out, "\n") {
		rest, ok := strings.CutPrefix(line, "BENCH ")
		if !ok {
			continue
		}
		f := map[string]int{}
		for kv := range strings.FieldsSeq(rest) {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if err != nil {
				return wrkResult{}, fmt.Errorf("wrk summary field %q: %w", kv, err)
			}
			f[k] = n
		}
		if f["duration_us"] <= 0 {
			return wrkResult{}, fmt.Errorf("wrk summary without duration: %q", line)
		}
		return wrkResult{
			requests: f["requests"],
			elapsed:  time.Duration(f["duration_us"]) * time.Microsecond,
			p50:      time.Duration(f["p50_us"]) * time.Microsecond,
			p99:      time.Duration(f["p99_us"]) * time.Microsecond,
			errors:   f["connect"] + f["read"] + f["write"] + f["status"] + f["timeout"],
		}, nil
	}
	return wrkResult{}, fmt.Errorf("no summary line in wrk output: %q", out)
}
