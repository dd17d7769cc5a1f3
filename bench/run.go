package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// run is the whole suite: install, build, measure, report.
func run(o options) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	if o.install {
		if err := installPeers(); err != nil {
			return err
		}
	} else if missing := missingPeers(); len(missing) > 0 {
		return fmt.Errorf("missing peers %v (run without -install=false to apt-get them)", missing)
	}
	dir, err := os.MkdirTemp("", "actd-bench-")
	if err != nil {
		return err
	}
	if o.keepDir {
		fmt.Fprintln(os.Stderr, "work directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	// Apache's children run as www-data and read their files from below here.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	return measureAll(ctx, o, root, dir)
}

// measureAll builds the programs into dir, runs every experiment, and
// writes the report and plot.
func measureAll(ctx context.Context, o options, root, dir string) error {
	started := time.Now()
	fmt.Fprintln(os.Stderr, "building actd, baseline and responder")
	t, err := buildTools(root, dir, o.actdBefore)
	if err != nil {
		return err
	}
	if t.actdErr != nil {
		fmt.Fprintln(os.Stderr, "actd did not build; its rows are marked failed:", t.actdErr)
	}
	if o.preload {
		return runPreload(ctx, t, root, dir) // preload.go
	}
	if o.issue21 {
		return runIssue21(ctx, o, t, root) // issue21run.go
	}
	if o.issue24 {
		return runIssue24(ctx, o, t, root) // issue24run.go
	}
	if t.actdBeforeErr != nil {
		fmt.Fprintln(os.Stderr, "actd of -actd-before did not build; its rows are marked failed:", t.actdBeforeErr)
	}
	w, err := newWrkRunner(dir)
	if err != nil {
		return err
	}
	rep := report{opts: o, facts: machineFacts(root, o.actdBefore), tools: t}
	fmt.Fprintln(os.Stderr, "loads:")
	rep.cells, rep.pairs = runMatrix(ctx, o, t, w)
	if o.idle > 0 && len(o.servers) > 0 && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "idle (%v)\n", o.idle)
		rep.idle = measureIdle(t, o.servers, o.idle)
	}
	if len(o.slow) > 0 && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "slow clients (%d slow, %d silent, %d good clients for %v):\n", slowConns, silentConns, goodConc, slowWindow)
		rep.slow = runSlowClients(ctx, t, o.slow)
	}
	if len(o.ramp) > 0 && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "scaling ramp:")
		rep.ramps = runRamps(ctx, t, o.ramp, o.rampTiming)
	}
	rep.elapsed = time.Since(started)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	return rep.write(o.out, o.plot)
}

// write prints the report, and writes it into the results section of out
// and the ramp plot to plotPath when they are set; issue 20's section
// (issue20report.go) goes into its own part of out when its servers ran,
// and is all that an -issue20 run writes. It returns the first write
// error.
func (r report) write(out, plotPath string) error {
	if plotPath != "" && len(r.ramps) > 0 {
		if err := writePlot(plotPath, r.ramps); err != nil {
			return err
		}
		r.plotName = filepath.Base(plotPath)
		fmt.Fprintln(os.Stderr, "wrote", plotPath)
	}
	var parts []section
	if !r.opts.issue20 && !r.opts.issue25 {
		parts = append(parts, section{beginMarker, endMarker, r.markdown()})
	}
	if r.measuredIssue20() {
		parts = append(parts, section{issue20Begin, issue20End, r.issue20Markdown()})
	}
	if r.measuredIssue25() {
		parts = append(parts, section{issue25Begin, issue25End, r.issue25Markdown()})
	}
	for _, p := range parts {
		fmt.Print(p.text)
		if out == "" {
			continue
		}
		if err := replaceSection(out, p); err != nil {
			return err
		}
	}
	if out != "" {
		fmt.Fprintln(os.Stderr, "wrote", out)
	}
	return nil
}
