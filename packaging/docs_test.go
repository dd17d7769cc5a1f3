package packaging

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/actd/actd/protocol"
)

// The names the code defines, found in its source wherever it moves to.
var (
	// envConst is a child environment variable: EnvSlot = "ACTD_SLOT".
	envConst = regexp.MustCompile(`\bEnv[A-Za-z]+\s*=\s*"([A-Z][A-Z_]+)"`)
	// eventLog is a logged event: Info("…", "event", "ready", …). Debug
	// lines are not logged (docs/operations.md, "Logs").
	eventLog = regexp.MustCompile(`\.(Info|Warn|Error)\([^\n]*"event", "([a-z]+)"`)
	// eventVar is an event chosen in a variable: event := "retire".
	eventVar = regexp.MustCompile(`\bevent\s*:?=\s*"([a-z]+)"`)
	// eventKill is an event passed to kill(s, "hung", …); "stop" is not logged.
	eventKill = regexp.MustCompile(`\.kill\([a-z.\[\]]+, "([a-z]+)"`)
	// metric is a Prometheus series written by cmd/actd/metrics.go.
	metricGauge   = regexp.MustCompile(`\b(?:gauge|family)\("([a-z_]+)"`)
	metricCounter = regexp.MustCompile(`\bcounter\("([a-z_]+)"`)
)

// goSource returns the text of every non-test Go file of the repository.
func goSource(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// found returns the sorted, distinct first groups (or group n) of re in text.
func found(re *regexp.Regexp, text string, n int) []string {
	var names []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		names = append(names, m[n])
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// readDoc returns the text of a file relative to packaging/.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// mdSection returns the part of a markdown text from the heading title to
// the next heading of the same or a higher level.
func mdSection(t *testing.T, text, title string) string {
	t.Helper()
	i := strings.Index(text, "\n"+title+"\n")
	if i < 0 {
		t.Fatalf("no heading %q", title)
	}
	level := strings.SplitN(title, " ", 2)[0]
	rest := text[i+len(title)+2:]
	for _, l := range []string{"\n# ", "\n## ", "\n### "} {
		if len(strings.TrimSpace(l)) > len(level) {
			break
		}
		if j := strings.Index(rest, l); j >= 0 {
			rest = rest[:j]
		}
	}
	return rest
}

// manSection returns the part of the man page from .SH title to the next .SH.
func manSection(t *testing.T, man, title string) string {
	t.Helper()
	i := strings.Index(man, "\n.SH "+title+"\n")
	if i < 0 {
		t.Fatalf("man page: no .SH %s", title)
	}
	rest := man[i+len(title)+5:]
	if j := strings.Index(rest, "\n.SH "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// manName is how a name shows in roff source: "-" written as "\-".
func manName(name string) string { return strings.ReplaceAll(name, "-", `\-`) }

// TestDocsListChildEnvironment: every variable the master sets for a child
// is in docs/protocol.md's environment table and in the man page's
// ENVIRONMENT section.
func TestDocsListChildEnvironment(t *testing.T) {
	names := found(envConst, goSource(t), 1)
	t.Logf("child variables in the Go source: %v", names)
	if len(names) < 7 {
		t.Fatalf("got %d child variables %v from the Go source, want the 7 of prefork/fds.go: has the pattern %v gone stale?", len(names), names, envConst)
	}
	table := mdSection(t, readDoc(t, "../docs/protocol.md"), "### Environment")
	man := manSection(t, readDoc(t, "man/actd.8"), "ENVIRONMENT")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(table, "| `"+name+"` |") {
				t.Errorf("docs/protocol.md, Environment: no row for %s", name)
			}
			if !regexp.MustCompile(`(?m)^\.(B|BR) .*\b` + name + `\b`).MatchString(man) {
				t.Errorf("actd.8, ENVIRONMENT: %s not listed", name)
			}
		})
	}
}

// TestDocsListJournalEvents: every ACTD_EVENT value actd logs is in the
// docs/operations.md table and the man page's JOURNAL FIELDS section.
func TestDocsListJournalEvents(t *testing.T) {
	src := goSource(t)
	events := slices.Concat(found(eventLog, src, 2), found(eventVar, src, 1), found(eventKill, src, 1))
	slices.Sort(events)
	events = slices.Compact(events)
	t.Logf("events in the Go source: %v", events)
	if !slices.Contains(events, "retire") || len(events) < 10 {
		t.Fatalf("got events %v from the Go source, want retire and the 13 of docs/operations.md: have the patterns gone stale?", events)
	}
	table := mdSection(t, readDoc(t, "../docs/operations.md"), "## Logs")
	man := manSection(t, readDoc(t, "man/actd.8"), "JOURNAL FIELDS")
	for _, e := range events {
		t.Run(e, func(t *testing.T) {
			if !strings.Contains(table, "| `"+e+"` |") {
				t.Errorf("docs/operations.md, Logs: no row for ACTD_EVENT=%s", e)
			}
			if !regexp.MustCompile(`(?m)^\.(B|BR) .*\b` + e + `\b`).MatchString(man) {
				t.Errorf("actd.8, JOURNAL FIELDS: ACTD_EVENT=%s not listed", e)
			}
		})
	}
}

// TestManPageListsMetrics: every series of cmd/actd/metrics.go is named in
// the man page's METRICS section.
func TestManPageListsMetrics(t *testing.T) {
	src := readDoc(t, "../cmd/actd/metrics.go")
	var series []string
	for _, g := range found(metricGauge, src, 1) {
		if !strings.HasPrefix(g, "process_") {
			g = "actd_" + g // as metricsWriter.family names it
		}
		series = append(series, g)
	}
	for _, c := range found(metricCounter, src, 1) {
		series = append(series, "actd_"+c+"_total")
	}
	if len(series) < 10 {
		t.Fatalf("got series %v from cmd/actd/metrics.go, want the 14 it wrote: have the patterns gone stale?", series)
	}
	man := manSection(t, readDoc(t, "man/actd.8"), "METRICS")
	for _, s := range series {
		if !strings.Contains(man, manName(s)) {
			t.Errorf("actd.8, METRICS: %s not listed", s)
		}
	}
}

// TestDebShipsDocs: the package carries docs/protocol.md, operations.md,
// architecture.md and go.md, gzipped, byte for byte as in the tree, so that a worker
// can be written offline.
func TestDebShipsDocs(t *testing.T) {
	root := extract(t, buildDeb(t, ""))
	for _, doc := range []string{"protocol.md", "operations.md", "architecture.md", "go.md", "http.md"} {
		t.Run(doc, func(t *testing.T) {
			got := run(t, "zcat", filepath.Join(root, "usr/share/doc/actd", doc+".gz"))
			if want := readDoc(t, filepath.Join("../docs", doc)); got != want {
				t.Errorf("usr/share/doc/actd/%s.gz: got %d bytes, want docs/%s (%d bytes)", doc, len(got), doc, len(want))
			}
		})
	}
}

// TestManPageSaysWhatReloadRuns: what `systemctl reload` runs is the
// shipped units' ExecReload=, and the man page's SIGNALS section says so
// by name (it once said systemctl reload sends SIGHUP).
func TestManPageSaysWhatReloadRuns(t *testing.T) {
	signals := manSection(t, readDoc(t, "man/actd.8"), "SIGNALS")
	for _, unit := range []string{"actd.service", "actd@.service"} {
		t.Run(unit, func(t *testing.T) {
			exec := values(readUnit(t, unit), "Service", "ExecReload")
			if len(exec) != 1 {
				t.Fatalf("%s: got ExecReload=%q, want one command", unit, exec)
			}
			cmd := strings.Fields(exec[0])
			if len(cmd) < 2 {
				t.Fatalf("%s: ExecReload=%s, want actd and a subcommand", unit, exec[0])
			}
			said := regexp.MustCompile(`(?s)\.B systemctl reload\n[^.]*\.BR ExecReload= ,\n\.BR "` +
				regexp.QuoteMeta(filepath.Base(cmd[0])+" "+strings.Join(cmd[1:], " ")) + `" [.,]`)
			if !said.MatchString(signals) {
				t.Errorf("actd.8, SIGNALS: does not say that systemctl reload runs %s's ExecReload=%s", unit, exec[0])
			}
		})
	}
}

// TestDocsListStrippedEnvironment: the variables a child does not inherit
// from the master (protocol.MasterEnv) but are not set afresh (no row of
// docs/protocol.md's environment table) are the ones protocol.md's
// Environment section and the man page's "Set for every child" name as
// left out, and neither names another as left out.
func TestDocsListStrippedEnvironment(t *testing.T) {
	envSrc := readDoc(t, "../protocol/fds.go") + readDoc(t, "../protocol/access.go")
	set := map[string]bool{}
	for _, name := range found(envConst, envSrc, 1) {
		set[name] = true
	}
	var want []string
	for _, name := range protocol.MasterEnv {
		if !set[name] {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	if len(want) < 4 {
		t.Fatalf("got %v left out and not set afresh, want systemd's 4 (NOTIFY_SOCKET, WATCHDOG_*, FDSTORE)", want)
	}
	upper := regexp.MustCompile(`\b[A-Z][A-Z_]{3,}\b`)
	section := mdSection(t, readDoc(t, "../docs/protocol.md"), "### Environment")
	intro, _, _ := strings.Cut(section, "| variable |")
	_, without, _ := strings.Cut(intro, "without")
	without, _, _ = strings.Cut(without, "below")
	man := manSection(t, readDoc(t, "man/actd.8"), "ENVIRONMENT")
	_, manWithout, _ := strings.Cut(man, "own environment without")
	manWithout, _, _ = strings.Cut(manWithout, "variables below")
	for doc, text := range map[string]string{"docs/protocol.md, Environment": without, "actd.8, Set for every child": manWithout} {
		got := found(upper, text, 0)
		got = slices.DeleteFunc(got, func(n string) bool { return set[n] && !slices.Contains(want, n) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: names %v as left out of a child's environment, want %v (protocol.MasterEnv less what the master sets)", doc, got, want)
		}
	}
}
