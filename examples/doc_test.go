package examples_test

import (
	"os"
	"strings"
	"testing"
)

// TestDocNamesEveryExample: doc.go's list names every example directory.
func TestDocNamesEveryExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "testdata" {
			continue
		}
		n++
		if !strings.Contains(string(doc), "//   - "+e.Name()) {
			t.Errorf("doc.go has no list entry \"- %s\"", e.Name())
		}
	}
	if n < 4 {
		t.Errorf("found %d example directories, want the 4 doc.go lists", n)
	}
}
