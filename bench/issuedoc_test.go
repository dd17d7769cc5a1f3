package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// issueDoc reads docs/benchmarks.md (skipping t outside the actd
// repository) and checks the section of an issue's run: its markers begin
// and end are there once each, begin first, so the run rewrites the
// section in place; each of commands (what the doc shows after
// "go run ./bench ") is there, and its arguments parse. It returns the
// document; an unreadable one fails t.
func issueDoc(t *testing.T, issue, begin, end string, commands ...string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Skipf("not in the actd repository: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	at, to := strings.Index(doc, begin), strings.Index(doc, end)
	if strings.Count(doc, begin) != 1 || strings.Count(doc, end) != 1 || at < 0 || to < at {
		t.Errorf("got issue %s markers at %d and %d (%d and %d of them), want one of each, begin first",
			issue, at, to, strings.Count(doc, begin), strings.Count(doc, end))
	}
	for _, command := range commands {
		if !strings.Contains(doc, "go run ./bench "+command) {
			t.Errorf("docs/benchmarks.md: got no command %q, want it shown", strings.TrimSpace(command))
		}
		if _, err := parseOptions(strings.Fields(command)); err != nil {
			t.Errorf("%v: got %v, want it to parse", strings.Fields(command), err)
		}
	}
	return doc
}
