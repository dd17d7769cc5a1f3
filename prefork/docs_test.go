package prefork

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureClaims: the figures docs/architecture.md gives for the
// backoff and the watchdog's health check are the code's.
func TestArchitectureClaims(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("younger than %v", youngAge),
		fmt.Sprintf("waits %v·2^(n−1), at most %v", backoffBase, backoffMax),
		fmt.Sprintf("at least %v old reports a finished connection", youngAge),
		fmt.Sprintf("still up %v after its start", provenAge),
		fmt.Sprintf("not %d missed pings in a row", unhealthyPingFails),
		fmt.Sprintf("doubles up to %d (`maxRamp`)", maxRamp),
	} {
		if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
			t.Errorf("docs/architecture.md does not say %q", want)
		}
	}
}

// TestPackagePicture: the packages docs/architecture.md draws as leaves
// import no other package of the module, and the worker library does not
// import the master.
func TestPackagePicture(t *testing.T) {
	const module = "github.com/actd/actd/"
	for _, tc := range []struct {
		dir    string
		denied func(path string) bool
	}{
		{"../protocol", func(p string) bool { return strings.HasPrefix(p, module) }},
		{"../activation", func(p string) bool { return strings.HasPrefix(p, module) }},
		{"../notify", func(p string) bool { return strings.HasPrefix(p, module) }},
		{"../slogjournal", func(p string) bool { return strings.HasPrefix(p, module) }},
		{"../cgroup", func(p string) bool { return strings.HasPrefix(p, module) }},
		{"worker", func(p string) bool { return p == module+"prefork" }},
		{".", func(p string) bool {
			return strings.HasPrefix(p, module) && p != module+"protocol" && p != module+"cgroup"
		}},
	} {
		for _, imp := range imports(t, tc.dir) {
			if tc.denied(imp) {
				t.Errorf("%s imports %s, against the picture in docs/architecture.md", tc.dir, imp)
			}
		}
	}
}

// imports returns the import paths of dir's non-test Go files.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var paths []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			paths = append(paths, p)
		}
	}
	return paths
}
