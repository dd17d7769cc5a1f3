package packaging

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actd/actd/config"
)

// flagInfo is one flag of actd as config.Usage prints it.
type flagInfo struct {
	name string
	def  string // "" when the default is the zero value
}

var (
	usageFlag    = regexp.MustCompile(`^  --([a-z][a-z-]*)`)
	usageDefault = regexp.MustCompile(`\(default "?([^")]*)"?\)$`)
	confLine     = regexp.MustCompile(`^(#?)([a-z][a-z-]*) = (.*)$`)
)

// actdFlags returns every flag of actd, from package config.
func actdFlags(t *testing.T) []flagInfo {
	t.Helper()
	var buf bytes.Buffer
	config.Usage(&buf)
	var flags []flagInfo
	for _, line := range strings.Split(buf.String(), "\n") {
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			flags = append(flags, flagInfo{name: m[1]})
		}
		if m := usageDefault.FindStringSubmatch(line); m != nil && len(flags) > 0 {
			flags[len(flags)-1].def = m[1]
		}
	}
	if len(flags) < 20 {
		t.Fatalf("got %d flags from config.Usage, want the 20-odd of docs/architecture.md:\n%s", len(flags), buf.String())
	}
	return flags
}

// confEntry is one "key = value" line of a config example.
type confEntry struct {
	value     string
	commented bool // "#key = value": a default or an example
}

// readConf returns the entries of etc/name by key; a repeated key keeps the last.
func readConf(t *testing.T, name string) map[string]confEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("etc", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string]confEntry{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m := confLine.FindStringSubmatch(s.Text()); m != nil {
			entries[m[2]] = confEntry{value: m[3], commented: m[1] == "#"}
		}
	}
	return entries
}

// examples are flags whose zero default means "off" or "from systemd"; the
// config file shows an example value for them instead.
var examples = map[string]bool{"listen": true, "socket-mode": true, "exec": true, "control-socket": true, "metrics-listen": true, "handler-files": true,
	"tls-cert": true, "tls-key": true, "proxy-protocol-from": true, "control-group": true, "status-path": true, "access-log-format": true}

// shippedSettings are the keys actd.conf sets for the default pool, uncommented,
// to a value other than the flag's default (docs/operations.md says why).
var shippedSettings = map[string]string{"accept-filter": "http"}

func TestConfListsEveryFlag(t *testing.T) {
	conf := readConf(t, "actd.conf")
	for _, f := range actdFlags(t) {
		t.Run(f.name, func(t *testing.T) {
			e, ok := conf[f.name]
			switch {
			case f.name == "config":
				if ok {
					t.Errorf("actd.conf sets config, which a file may not")
				}
			case shippedSettings[f.name] != "":
				if !ok || e.commented || e.value != shippedSettings[f.name] {
					t.Errorf("actd.conf: got %+v, want the line \"%s = %s\" the default pool ships", e, f.name, shippedSettings[f.name])
				}
			case !ok || !e.commented:
				t.Errorf("actd.conf: got no line \"#%s = ...\", want its default commented out", f.name)
			case examples[f.name]:
			case f.def == "" && e.value != "0" && e.value != "0s":
				t.Errorf("#%s = %s, want the zero default, 0 or 0s", f.name, e.value)
			case f.def != "" && !strings.Contains(f.def, "$") && e.value != f.def:
				t.Errorf("#%s = %s, want the default %s", f.name, e.value, f.def)
			}
		})
	}
}

func TestConfKeysAreKnown(t *testing.T) {
	known := map[string]bool{"worker": true}
	for _, f := range actdFlags(t) {
		known[f.name] = f.name != "config"
	}
	for _, file := range []string{"actd.conf", "example.conf"} {
		for key := range readConf(t, file) {
			if !known[key] {
				t.Errorf("%s: key %q is no flag of actd", file, key)
			}
		}
	}
}

func TestManPageListsEveryFlag(t *testing.T) {
	man, err := os.ReadFile("man/actd.8")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range actdFlags(t) {
		roff := `\-\-` + strings.ReplaceAll(f.name, "-", `\-`)
		if !regexp.MustCompile(`(?m)^\.B[IR] ` + regexp.QuoteMeta(roff) + `( |$)`).Match(man) {
			t.Errorf("man/actd.8: got no .BI or .BR line for %s, want one under OPTIONS", roff)
		}
	}
}

// manDefaults returns, for each flag block under OPTIONS, the first word
// after "Default:" (roff font macros removed); "" when the block has none.
func manDefaults(t *testing.T) map[string]string {
	t.Helper()
	man, err := os.ReadFile("man/actd.8")
	if err != nil {
		t.Fatal(err)
	}
	head := regexp.MustCompile(`^\.B[IR] \\-\\-(\S+)`)
	defaults := map[string]string{}
	for _, block := range strings.Split(string(man), "\n.TP\n") {
		m := head.FindStringSubmatch(block)
		if m == nil {
			continue
		}
		name := strings.ReplaceAll(m[1], `\-`, "-")
		_, after, ok := strings.Cut(block, "Default:")
		if !ok {
			defaults[name] = ""
			continue
		}
		words := strings.Fields(strings.NewReplacer(".BR ", "", ".B ", "", ".I ", "").Replace(after))
		defaults[name] = strings.TrimRight(words[0], ".,")
	}
	return defaults
}

func TestManPageDefaults(t *testing.T) {
	got := manDefaults(t)
	for _, f := range actdFlags(t) {
		t.Run(f.name, func(t *testing.T) {
			d := got[f.name]
			switch {
			case f.def == "" && d != "" && d != "0" && d != "0s" && d != "off":
				t.Errorf("man page default %q, want none, 0 or off", d)
			case f.def != "" && d != f.def:
				t.Errorf("man page default %q, want %q", d, f.def)
			}
		})
	}
}

func TestManPageFormatsCleanly(t *testing.T) {
	needTool(t, "groff", "groff-base")
	cmd := exec.Command("groff", "-man", "-ww", "-z", "man/actd.8")
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww: %v\n%s", err, out)
	}
}

// TestStopTimeoutCoversGracefulTimeout: systemd must not SIGKILL the pool
// while the master still drains within graceful-timeout.
func TestStopTimeoutCoversGracefulTimeout(t *testing.T) {
	def := ""
	for _, f := range actdFlags(t) {
		if f.name == "graceful-timeout" {
			def = f.def
		}
	}
	cases := []struct{ unit, conf, graceful string }{
		{"actd.service", "actd.conf", def},
		{"actd@.service", "example.conf", readConf(t, "example.conf")["graceful-timeout"].value},
	}
	for _, c := range cases {
		t.Run(c.unit, func(t *testing.T) {
			stop, err1 := time.ParseDuration(strings.Join(values(readUnit(t, c.unit), "Service", "TimeoutStopSec"), ""))
			graceful, err2 := time.ParseDuration(c.graceful)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			if stop < graceful+5*time.Second {
				t.Errorf("TimeoutStopSec=%v, want at least %s's graceful-timeout %v + 5s", stop, c.conf, graceful)
			}
		})
	}
}

// TestCheckConfig runs the packaged actd on the packaged config files.
func TestCheckConfig(t *testing.T) {
	if !canRun() {
		t.Skipf("cannot run an %s binary here", debArch)
	}
	root := extract(t, buildDeb(t, ""))
	bad := filepath.Join(t.TempDir(), "bad.conf")
	copyFile(t, filepath.Join(root, "etc/actd/example.conf"), bad, 0o644)
	appendFile(t, bad, "max-children = 5000\n")
	cases := []struct {
		file     string
		wantExit int
		wantText string
	}{
		{filepath.Join(root, "etc/actd/actd.conf"), 0, ""},
		{filepath.Join(root, "etc/actd/example.conf"), 0, ""},
		{bad, 78, "max-children"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			out, err := exec.Command(filepath.Join(root, "usr/bin/actd"), "check-config", c.file).CombinedOutput()
			exit := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if exit != c.wantExit || !strings.Contains(string(out), c.wantText) {
				t.Errorf("got exit %d %q, want exit %d naming %q", exit, out, c.wantExit, c.wantText)
			}
		})
	}
}

// opsFlagRow is a row of docs/operations.md's flag table: "| `--name ARG` |
// default | allowed | meaning |".
var opsFlagRow = regexp.MustCompile("(?m)^\\| `--([a-z][a-z-]*)[^`]*` \\| ([^|]*) \\|")

// TestOperationsFlagTable: docs/operations.md's flag table has one row for
// every flag of actd and none for another, and each row's default is the
// flag's: the first `code` of the default cell, or for a flag whose default
// is the zero value, a cell that starts with none, off, `0` or `off`.
func TestOperationsFlagTable(t *testing.T) {
	table := mdSection(t, readDoc(t, "../docs/operations.md"), "## Flags and the config file")
	rows := map[string]string{}
	for _, m := range opsFlagRow.FindAllStringSubmatch(table, -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("docs/operations.md: two rows for --%s", m[1])
		}
		rows[m[1]] = strings.TrimSpace(m[2])
	}
	flags := actdFlags(t)
	described := describedDefaults(t)
	known := map[string]bool{}
	for _, f := range flags {
		known[f.name] = true
		t.Run(f.name, func(t *testing.T) {
			cell, ok := rows[f.name]
			if !ok {
				t.Fatalf("docs/operations.md: no row for --%s", f.name)
			}
			if words, ok := described[f.name]; ok {
				if plain := strings.ReplaceAll(cell, "`", ""); !strings.Contains(plain, words) {
					t.Errorf("docs/operations.md: --%s default %q, want %q as --help says", f.name, cell, words)
				}
				return
			}
			if got := firstCode(cell); !sameDefault(got, f.def) && !(f.def == "" && zeroDefault(cell)) {
				t.Errorf("docs/operations.md: --%s default %q, want %q", f.name, cell, f.def)
			}
		})
	}
	for name := range rows {
		if !known[name] {
			t.Errorf("docs/operations.md: a row for --%s, which is no flag of actd", name)
		}
	}
}

// describedDefaults returns, by flag name, the defaults config.Usage
// describes in words ("(default: combined plus %D)") rather than gives.
func describedDefaults(t *testing.T) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	config.Usage(&buf)
	words := map[string]string{}
	re := regexp.MustCompile(`^  --([a-z][a-z-]*) .*\(default: ([^;)]*)[;)]`)
	for _, line := range strings.Split(buf.String(), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			words[m[1]] = m[2]
		}
	}
	return words
}

// firstCode returns the first `code` span of a markdown cell, or its first
// word if it has none.
func firstCode(cell string) string {
	_, rest, ok := strings.Cut(cell, "`")
	if !ok {
		word, _, _ := strings.Cut(cell, " ")
		return word
	}
	code, _, _ := strings.Cut(rest, "`")
	return code
}

// zeroDefault reports whether a default cell says "no value": none, off
// or `0`.
func zeroDefault(cell string) bool {
	for _, p := range []string{"none", "off", "`0`", "`off`", "`none`"} {
		if strings.HasPrefix(cell, p) {
			return true
		}
	}
	return false
}

// sameDefault reports whether doc, as the table writes a default, is the
// flag's default def: the same text, the same duration (60s and 1m0s),
// off for false, or any text for a default read from the environment
// ($RUNTIME_DIRECTORY).
func sameDefault(doc, def string) bool {
	if doc == def || doc == "off" && def == "false" || strings.Contains(def, "$") {
		return true
	}
	a, err1 := time.ParseDuration(doc)
	b, err2 := time.ParseDuration(def)
	return err1 == nil && err2 == nil && a == b
}

// TestOperationsReloadTable: docs/operations.md's table of what a reload
// changes names every flag but config in exactly one column, and its last
// column ("needs a restart") is what the code keeps at its running value
// (config.KeepStartOnly, config/restart.go) and what the pool refuses to
// change (accept, accept-filter).
func TestOperationsReloadTable(t *testing.T) {
	section := mdSection(t, readDoc(t, "../docs/operations.md"), "### What a reload (SIGHUP) changes")
	var cells []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			cells = strings.Split(strings.Trim(line, "| "), " | ")
		}
	}
	if len(cells) != 3 {
		t.Fatalf("docs/operations.md, What a reload changes: got row %q, want one row of 3 columns", cells)
	}
	inCell := func(cell, name string) bool {
		if strings.Contains(cell, "`"+name+"`") {
			return true
		}
		for _, m := range regexp.MustCompile("`([a-z]+)-\\*`").FindAllStringSubmatch(cell, -1) {
			if strings.HasPrefix(name, m[1]+"-") {
				return true
			}
		}
		return false
	}
	restart := found(regexp.MustCompile(`append\(keys, "([a-z-]+)"\)`), readDoc(t, "../config/restart.go"), 1)
	if len(restart) < 5 {
		t.Fatalf("got keys %v from config/restart.go, want the 8 of KeepStartOnly: has the pattern gone stale?", restart)
	}
	restart = append(restart, "accept", "accept-filter")
	for _, f := range actdFlags(t) {
		if f.name == "config" {
			continue
		}
		var cols []int
		for i, c := range cells {
			if inCell(c, f.name) {
				cols = append(cols, i)
			}
		}
		want := 0 // applies at once or to the new generation: column 0 or 1
		if slices.Contains(restart, f.name) {
			want = 2
		}
		switch {
		case len(cols) != 1:
			t.Errorf("--%s is in columns %v of the reload table, want exactly one", f.name, cols)
		case want == 2 && cols[0] != 2:
			t.Errorf("--%s is in column %d of the reload table, want the last (needs a restart): the code keeps it", f.name, cols[0])
		case want == 0 && cols[0] == 2:
			t.Errorf("--%s is under \"needs a restart\", but a reload applies it", f.name)
		}
	}
}
