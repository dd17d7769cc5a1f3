package protocol

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The wire has one table, this package's; every other implementation
// carries a copy in its own language, under the Go names in upper case,
// and declares the revision it is written for (REVISION). TestLanguages
// runs each language on its copy and compares it with the Go table cut at
// that revision, so that a message or capability added here fails for the
// languages that claim its revision until they have it too, and for no
// other.

// capSince is the revision that added each capability, as docs/protocol.md's
// capability table ends each row ("revision 3"); every name in capNames
// needs a line.
var capSince = map[string]int{"handoff": 3, "fork": 3, "screen": 4, "offload": 5, "proxy": 6, "tls": 6}

// wireEntry is one line of the wire table as another language has it.
type wireEntry struct {
	name     string // the language's name: the Go name in upper case
	value    string // a message's letter, or a number in decimal
	letter   bool   // a message type
	since    int    // the revision that added it
	optional bool   // a worker may do without it; checked only where defined
}

// wireTable returns the Go table as other languages name it: the message
// types, the capabilities (CAP_FORK where the bare name is a message's),
// and the values with a meaning.
func wireTable(t *testing.T) []wireEntry {
	t.Helper()
	var table []wireEntry
	messages := map[string]bool{}
	for _, e := range types {
		name := strings.ToUpper(e.name)
		messages[name] = true
		table = append(table, wireEntry{name: name, value: string(rune(e.t)), letter: true, since: e.revision})
	}
	for i, c := range capNames {
		if c == "" {
			continue // reserved
		}
		since, ok := capSince[c]
		if !ok {
			t.Fatalf("capability %s has no revision in capSince (languages_test.go): add the one that added it", c)
		}
		name := strings.ToUpper(c)
		if messages[name] {
			name = "CAP_" + name
		}
		table = append(table, wireEntry{name: name, value: strconv.Itoa(1 << i), since: since})
	}
	return append(table,
		wireEntry{name: "WIRE", value: strconv.Itoa(Wire), since: 1},
		wireEntry{name: "HEADER_SIZE", value: strconv.Itoa(MessageSize), since: 1, optional: true},
		wireEntry{name: "MAX_TEXT", value: strconv.Itoa(MaxText), since: Since(Request)},
		wireEntry{name: "FIRST_FD", value: strconv.Itoa(FirstListenerFD), since: 1, optional: true},
		// A worker may take a keep-accepting order for a plain one.
		wireEntry{name: "KEEP_ACCEPTING", value: strconv.FormatUint(uint64(KeepAccepting), 10), since: 1, optional: true},
		wireEntry{name: "NOT_READY", value: strconv.FormatUint(uint64(NotReady), 10), since: capSince["screen"]},
		wireEntry{name: "KEEP_ALIVE", value: strconv.FormatUint(uint64(KeepAlive), 10), since: capSince["offload"]},
		wireEntry{name: "TRAILER_SIZE", value: strconv.Itoa(TrailerSize), since: capSince["offload"], optional: true},
		// A worker may trust the master's addresses to fit without naming the bound.
		wireEntry{name: "MAX_ADDR", value: strconv.Itoa(MaxAddr), since: capSince["proxy"], optional: true},
		// A worker that sends no tallies has no use for the trailer's size.
		wireEntry{name: "TALLY_SIZE", value: strconv.Itoa(TallySize), since: Since(Tally), optional: true},
	)
}

// sampleHeader is the message every language encodes with its own code,
// to show its header layout is the Go one.
var sampleHeader = Message{Type: Busy, Listener: 0x0102, Value: 0x03040506}

// language is one implementation of the wire outside Go.
type language struct {
	name    string         // as the test names it
	sources []string       // its source files (globs, from protocol/)
	letter  *regexp.Regexp // a message letter written out in code
	// table runs the language and returns the names it defines among
	// those asked for, with their values as it prints them, its REVISION,
	// and "header": sampleHeader as it encodes it, in hex. It skips t
	// when the language's tool is missing.
	table func(t *testing.T, want []wireEntry) map[string]string
}

var (
	pythonLetter = regexp.MustCompile(`b["'][A-Z]["']`)
	perlLetter   = regexp.MustCompile(`(?:send_message\(|\$type (?:eq|ne) |pack\(HEADER, )'[A-Z]'`)
	cLetter      = regexp.MustCompile(`'[A-Z]'`)
)

var languages = []language{
	{"Python adapter (python/actd/channel.py)", []string{"../python/actd/*.py"}, pythonLetter, python("../python", "actd.channel")},
	{"Python example (examples/python-worker/worker.py)", []string{"../examples/python-worker/*.py"}, pythonLetter, python("../examples/python-worker", "worker")},
	{"Perl handler (perl/lib/Actd/Protocol.pm)", []string{"../perl/lib/Actd/*.pm", "../perl/lib/Plack/Handler/*.pm"}, perlLetter, perlTable},
	{"C example (examples/c-worker/wire.h)", []string{"../examples/c-worker/*.[ch]"}, cLetter, cTable},
}

// lettersLeft lists the files that still write message letters out in
// code, each with why; TestLanguagesNamedLetters fails when one no longer
// does, so that the list only shrinks.
var lettersLeft = map[string]string{}

// TestLanguages: every language defines, with the Go value, each message,
// capability and value of the Go table up to the revision it declares (at
// most Version), defines nothing of the table with another value, and
// encodes a header as Encode does.
func TestLanguages(t *testing.T) {
	table := wireTable(t)
	var want [MessageSize]byte
	header := hex.EncodeToString(sampleHeader.Encode(want[:]))
	for _, lang := range languages {
		t.Run(lang.name, func(t *testing.T) {
			got := lang.table(t, table)
			rev, err := strconv.Atoi(got["REVISION"])
			if err != nil || rev < 1 || rev > Version {
				t.Fatalf("REVISION = %q, want 1 to %d", got["REVISION"], Version)
			}
			for _, e := range table {
				v, ok := got[e.name]
				switch {
				case ok && v != e.value:
					t.Errorf("%s = %q, want %q (package protocol)", e.name, v, e.value)
				case !ok && !e.optional && e.since <= rev:
					t.Errorf("no %s (%s, revision %d), which revision %d has", e.name, e.value, e.since, rev)
				}
			}
			if got["header"] != header {
				t.Errorf("%c, listener %#04x, value %#08x encodes as %q, want %q",
					sampleHeader.Type, sampleHeader.Listener, sampleHeader.Value, got["header"], header)
			}
		})
	}
}

// adapterEnv lists the ACTD_* variables the WSGI and PSGI adapters read
// that the operator sets, not the master (--forwarded-allow-ips's).
var adapterEnv = []string{"ACTD_FORWARDED_ALLOW_IPS"}

// TestLanguagesEnvironment: every ACTD_* and LISTEN_* name in the other
// languages' sources is one the master sets (MasterEnv), or an adapter's
// own (adapterEnv).
func TestLanguagesEnvironment(t *testing.T) {
	known := regexp.MustCompile(`\b(?:ACTD|LISTEN)_[A-Z][A-Z_]*[A-Z]\b`)
	for _, lang := range languages {
		t.Run(lang.name, func(t *testing.T) {
			files := sources(t, lang.sources)
			for _, f := range files {
				text, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range known.FindAllString(string(text), -1) {
					if !slices.Contains(MasterEnv, name) && !slices.Contains(adapterEnv, name) {
						t.Errorf("%s: %s is no variable the master sets", f, name)
					}
				}
			}
		})
	}
}

// TestLanguagesNamedLetters: message letters appear in code by name only;
// the one line where a name is given its letter (NAME = b"H", NAME => 'H',
// #define NAME 'H') is the only place a letter is written out.
func TestLanguagesNamedLetters(t *testing.T) {
	definition := regexp.MustCompile(`^\s*(?:#define [A-Z_]+ |[A-Z_]+(?:, [A-Z_]+)* = |[A-Z_]+ *=> )`)
	for _, lang := range languages {
		t.Run(lang.name, func(t *testing.T) {
			for _, f := range sources(t, lang.sources) {
				text, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				bare := 0
				for i, line := range strings.Split(string(text), "\n") {
					if lang.letter.MatchString(line) && !definition.MatchString(line) {
						bare++
						if lettersLeft[f] == "" {
							t.Errorf("%s:%d: a message letter written out, not named: %s", f, i+1, strings.TrimSpace(line))
						}
					}
				}
				if why := lettersLeft[f]; why != "" && bare == 0 {
					t.Errorf("%s names every letter now: take it off lettersLeft (%s)", f, why)
				}
			}
		})
	}
}

// TestCapSince: capSince says what docs/protocol.md's capability table
// says, so the revisions the languages are held to are the documented ones.
func TestCapSince(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| \\d+ \\| `(\\w+)` \\|.*revision (\\d+) \\|$")
	rows := row.FindAllStringSubmatch(string(protocolDoc(t)), -1)
	named := 0 // a reserved bit's name is ""
	for _, c := range capNames {
		if c != "" {
			named++
		}
	}
	if len(rows) != named {
		t.Fatalf("docs/protocol.md has %d capability rows ending in a revision, the code %d capabilities", len(rows), named)
	}
	for _, r := range rows {
		if got := strconv.Itoa(capSince[r[1]]); got != r[2] {
			t.Errorf("capability %s: capSince says revision %s, docs/protocol.md %s", r[1], got, r[2])
		}
	}
}

// sources returns the files the globs name, failing t if there are none.
func sources(t *testing.T, globs []string) []string {
	t.Helper()
	var files []string
	for _, g := range globs {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no source files in %v", globs)
	}
	return files
}

// names returns the names of table's entries.
func names(table []wireEntry) []string {
	var n []string
	for _, e := range table {
		n = append(n, e.name)
	}
	return n
}

// run runs a language's command and returns what it printed as name=value
// lines; it skips t when the command's tool is missing.
func run(t *testing.T, tool string, cmd *exec.Cmd) map[string]string {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not found: %v", tool, err)
	}
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			got[name] = value
		}
	}
	return got
}

// pythonTable prints a module's table: letters (bytes) as text.
const pythonTable = `
import importlib, sys
sys.path.insert(0, sys.argv[1])
m = importlib.import_module(sys.argv[2])
for name in ["REVISION"] + sys.argv[3:]:
    if hasattr(m, name):
        value = getattr(m, name)
        print(f"{name}={value.decode('latin-1') if isinstance(value, bytes) else value}")
if all(hasattr(m, n) for n in ("HEADER", "BUSY", "WIRE")):
    print("header=" + m.HEADER.pack(m.BUSY, m.WIRE, %d, %d).hex())
`

// python returns the table function of the Python module mod under dir.
func python(dir, mod string) func(*testing.T, []wireEntry) map[string]string {
	return func(t *testing.T, want []wireEntry) map[string]string {
		script := fmt.Sprintf(pythonTable, sampleHeader.Listener, sampleHeader.Value)
		args := append([]string{"-I", "-B", "-c", script, dir, mod}, names(want)...)
		return run(t, "python3", exec.Command("python3", args...))
	}
}

// perlScript prints Actd::Protocol's table.
const perlScript = `
use strict;
use warnings;
use Actd::Protocol;
for my $name ('REVISION', @ARGV) {
    my $value = Actd::Protocol->can($name) or next;
    print "$name=", $value->(), "\n";
}
print 'header=', unpack('H*', pack(Actd::Protocol::HEADER(), Actd::Protocol::BUSY(), Actd::Protocol::WIRE(), %d, %d)), "\n"
    if !grep { !Actd::Protocol->can($_) } qw(HEADER BUSY WIRE);
`

func perlTable(t *testing.T, want []wireEntry) map[string]string {
	script := fmt.Sprintf(perlScript, sampleHeader.Listener, sampleHeader.Value)
	args := append([]string{"-I../perl/lib", "-e", script}, names(want)...)
	return run(t, "perl", exec.Command("perl", args...))
}

// cTable compiles a program that includes examples/c-worker/wire.h and
// prints each name it defines.
func cTable(t *testing.T, want []wireEntry) map[string]string {
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n#include \"wire.h\"\nint main(void) {\n")
	for _, e := range append([]wireEntry{{name: "REVISION"}}, want...) {
		format, conv := "%ld", "(long)"
		if e.letter {
			format, conv = "%c", "(char)"
		}
		fmt.Fprintf(&b, "#ifdef %s\n\tprintf(\"%s=%s\\n\", %s(%s));\n#endif\n", e.name, e.name, format, conv, e.name)
	}
	fmt.Fprintf(&b, `#if defined(BUSY) && defined(HEADER_SIZE)
	unsigned char m[HEADER_SIZE];
	encode(m, BUSY, %d, %d);
	printf("header=");
	for (int i = 0; i < HEADER_SIZE; i++)
		printf("%%02x", m[i]);
	printf("\n");
#endif
	return 0;
}
`, sampleHeader.Listener, sampleHeader.Value)
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "table.c"), filepath.Join(dir, "table")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skipf("gcc not found (Debian package gcc): %v", err)
	}
	if out, err := exec.Command("gcc", "-Wall", "-Werror", "-I../examples/c-worker", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s\n%s", err, out, b.String())
	}
	return run(t, bin, exec.Command(bin))
}
