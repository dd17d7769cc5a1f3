package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Markers around the part of docs/benchmarks.md the suite rewrites.
const (
	beginMarker = "<!-- bench:begin: written by `go run ./bench`; edits up to bench:end are overwritten -->"
	endMarker   = "<!-- bench:end -->"
)

// report is everything one run of the suite measured.
type report struct {
	opts     options
	facts    []fact
	tools    *tools
	cells    []cell
	pairs    []pairCell // issue 20's target pairs loaded together
	idle     []idleMeasure
	ramps    []rampResult
	slow     []slowResult
	elapsed  time.Duration
	plotName string // file name of the plot next to the markdown, or ""
}

// markdown renders the report, markers included.
func (r report) markdown() string {
	var b strings.Builder
	b.WriteString(beginMarker + "\n\n")
	r.writeHeader(&b)
	r.writeTargets(&b)
	r.writeAB(&b)
	r.writeLoads(&b)
	r.writeIdle(&b)
	r.writeSlow(&b)
	r.writeRamps(&b)
	r.writeCommands(&b)
	r.writeNotes(&b)
	b.WriteString(endMarker + "\n")
	return b.String()
}

// writeHeader writes how the run was made and on what.
func (r report) writeHeader(b *strings.Builder) {
	o := r.opts
	fmt.Fprintf(b, "Command: `go run ./bench` (%d interleaved rounds; in each, every server gets %v of warm-up, %v for the slow load, then one run of %v; idle window %v). The whole run took %s.\n\n",
		o.runs, o.warmup, o.slowWarmup, o.duration, o.idle, r.elapsed.Round(time.Second))
	b.WriteString("| machine | |\n|---|---|\n")
	for _, f := range r.facts {
		fmt.Fprintf(b, "| %s | %s |\n", f.name, mdEscape(f.value))
	}
	b.WriteString("\n")
}

// writeNotes lists failures and unclean stops, so nothing goes missing.
func (r report) writeNotes(b *strings.Builder) {
	var notes []string
	if r.tools.actdErr != nil {
		notes = append(notes, "actd did not build: "+firstLineOf(r.tools.actdErr.Error()))
	}
	if r.tools.actdBeforeErr != nil {
		notes = append(notes, "actd of -actd-before did not build: "+firstLineOf(r.tools.actdBeforeErr.Error()))
	}
	for _, c := range r.cells {
		if c.err != nil {
			notes = append(notes, fmt.Sprintf("%s, %s: failed: %s", c.server, c.load.name, firstLineOf(c.err.Error())))
		}
		if c.stop != nil {
			notes = append(notes, fmt.Sprintf("%s, %s: %s", c.server, c.load.name, c.stop))
		}
	}
	for _, m := range r.idle {
		if m.err != nil {
			notes = append(notes, fmt.Sprintf("%s, idle: %s", m.server, firstLineOf(m.err.Error())))
		}
	}
	for _, sr := range r.slow {
		if sr.err != nil {
			notes = append(notes, fmt.Sprintf("%s, slow clients: %s", sr.server, firstLineOf(sr.err.Error())))
		}
	}
	for _, rr := range r.ramps {
		if rr.err != nil {
			notes = append(notes, fmt.Sprintf("%s, ramp: %s", rr.server, firstLineOf(rr.err.Error())))
		}
		if rr.stop != nil {
			notes = append(notes, fmt.Sprintf("%s, ramp: %s", rr.server, rr.stop))
		}
	}
	if len(notes) == 0 {
		b.WriteString("No server failed or had to be killed in this run.\n\n")
		return
	}
	b.WriteString("### Failures in this run\n\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", mdEscape(n))
	}
	b.WriteString("\n")
}

// section is a marked part of a markdown file that the suite rewrites.
type section struct {
	begin, end string // the marker lines around it
	text       string // the new part, markers included
}

// replaceSection puts s.text in place of the part of the file at path
// between s's markers, or appends it if the file has no markers, or
// creates the file. It returns an error if the file cannot be read or
// written.
func replaceSection(path string, s section) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc := string(old)
	begin, end := strings.Index(doc, s.begin), strings.Index(doc, s.end)
	switch {
	case begin >= 0 && end > begin:
		doc = doc[:begin] + s.text + strings.TrimPrefix(doc[end+len(s.end):], "\n")
	case doc == "":
		doc = "# actd benchmarks\n\n" + s.text
	default:
		doc = strings.TrimRight(doc, "\n") + "\n\n" + s.text
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

// firstLineOf returns s up to its first newline.
func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// mdEscape keeps s from breaking a markdown table.
func mdEscape(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
