package python_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsListWSGIOptions: docs/python.md's table of the options of
// python3 -m actd.wsgi has a row for every option its argument parser
// takes, and none for another.
func TestDocsListWSGIOptions(t *testing.T) {
	src, err := os.ReadFile("actd/wsgi.py")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/python.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "Options of `python3 -m actd.wsgi`:")
	table, _, _ = strings.Cut(strings.TrimLeft(table, "\n"), "\n\n")
	want := regexp.MustCompile(`add_argument\("(--[a-z-]+)"`).FindAllStringSubmatch(string(src), -1)
	got := regexp.MustCompile("(?m)^\\| `(--[a-z-]+)").FindAllStringSubmatch(table, -1)
	if len(want) < 5 {
		t.Fatalf("got %d options from actd/wsgi.py, want its 6: has the parser moved?", len(want))
	}
	names := func(ms [][]string) []string {
		var n []string
		for _, m := range ms {
			n = append(n, m[1])
		}
		return n
	}
	if g, w := strings.Join(names(got), " "), strings.Join(names(want), " "); g != w {
		t.Errorf("docs/python.md, Options of python3 -m actd.wsgi: rows %s, want %s (actd/wsgi.py's order)", g, w)
	}
}
