package protocol

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestDocMessageTable: docs/protocol.md's message table lists every type
// with its name, direction and revision, as the code has them, and nothing
// else.
func TestDocMessageTable(t *testing.T) {
	doc := protocolDoc(t)
	row := regexp.MustCompile("(?m)^\\| `(.)` (\\w+) \\| (child → master|master → child) \\| (\\d+) \\|")
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) != len(types) {
		t.Errorf("docs/protocol.md has %d message rows, the code %d types", len(rows), len(types))
	}
	for i, r := range rows {
		if i >= len(types) {
			break
		}
		e := types[i]
		dir := "master → child"
		if e.child {
			dir = "child → master"
		}
		rev, _ := strconv.Atoi(r[4])
		if r[1] != string(rune(e.t)) || r[2] != e.name || r[3] != dir || rev != e.revision {
			t.Errorf("row %d: got %s %s, %s, since %s; want %c %s, %s, since %d", i, r[1], r[2], r[3], r[4], e.t, e.name, dir, e.revision)
		}
	}
}

// TestDocCapabilities: the capability table names every bit as Caps does.
func TestDocCapabilities(t *testing.T) {
	doc := protocolDoc(t)
	row := regexp.MustCompile("(?m)^\\| (\\d+) \\| `(\\w+)` \\|")
	rows := row.FindAllStringSubmatch(string(doc), -1)
	var bits []int // the named ones: a reserved bit's name is ""
	for i, name := range capNames {
		if name != "" {
			bits = append(bits, i)
		}
	}
	if len(rows) != len(bits) {
		t.Fatalf("docs/protocol.md has %d capability rows, the code %d", len(rows), len(bits))
	}
	for i, r := range rows {
		if b := bits[i]; r[1] != strconv.Itoa(b) || r[2] != capNames[b] {
			t.Errorf("row %d: got bit %s %s, want bit %d %s", i, r[1], r[2], b, capNames[b])
		}
	}
}

// TestDocRevision: the title names Version, and so does every place in the
// docs that says what ACTD_PROTOCOL is today (`ACTD_PROTOCOL=N` in code
// quotes; a command that sets an older revision on purpose is no such
// statement).
func TestDocRevision(t *testing.T) {
	doc := protocolDoc(t)
	want := "# actd back-channel protocol, revision " + strconv.Itoa(Version) + "\n"
	if !regexp.MustCompile("^" + regexp.QuoteMeta(want)).Match(doc) {
		t.Errorf("docs/protocol.md does not start with %q", want)
	}
	today := regexp.MustCompile("`ACTD_PROTOCOL=(\\d+)`|\\(today `(\\d+)`\\)|the master speaks, `(\\d+)`")
	files, err := filepath.Glob("../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	seen := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range today.FindAllStringSubmatch(string(text), -1) {
			seen++
			if got := m[1] + m[2] + m[3]; got != strconv.Itoa(Version) {
				t.Errorf("%s: %q says revision %s, want %d", f, m[0], got, Version)
			}
		}
	}
	if seen < 3 {
		t.Errorf("found %d statements of today's revision in docs/, want the 3 the test was written for", seen)
	}
}

// protocolDoc returns docs/protocol.md.
func protocolDoc(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
