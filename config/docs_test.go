package config

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsNameRepeatableKeys: the man page, docs/operations.md,
// docs/architecture.md and the package doc name exactly the keys a config
// file may repeat (repeatable), where they say which may.
func TestDocsNameRepeatableKeys(t *testing.T) {
	var want []string
	for key := range repeatable {
		want = append(want, key)
	}
	slices.Sort(want)
	for _, tc := range []struct{ file, sentence string }{
		{"../packaging/man/actd.8", `(?s)\nOnly\n(.*?)\smay repeat;`},
		{"../docs/operations.md", `(?m)^- (.*) may repeat;`},
		{"doc.go", `(listen = .*\(may repeat.*\))`},
		{"../docs/architecture.md", `(?m)^(.*) may repeat;`},
	} {
		text, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(tc.sentence).FindSubmatch(text)
		if m == nil {
			t.Errorf("%s: no sentence %q", tc.file, tc.sentence)
			continue
		}
		said := strings.ReplaceAll(string(m[1]), `\-`, "-")
		var got []string
		for _, w := range regexp.MustCompile(`[a-z][a-z-]+[a-z]`).FindAllString(said, -1) {
			if keyNames()[w] {
				got = append(got, w)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s says %v may repeat, want %v", tc.file, got, want)
		}
	}
}

// keyNames returns every key a config file may give: the flags but config.
func keyNames() map[string]bool {
	keys := map[string]bool{}
	fs, _ := newFlagSet(&Config{})
	fs.VisitAll(func(f *flag.Flag) { keys[f.Name] = f.Name != "config" })
	return keys
}
