package prefork

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
// import no other package of the module, and the worker library imports
// only the wire (protocol), the filter's rule (acceptfilter) and PROXY
// headers (proxyproto), never the master.
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
		{"acceptfilter", func(p string) bool { return strings.HasPrefix(p, module) && p != module+"protocol" }},
		{"../accesslog", func(p string) bool { return strings.HasPrefix(p, module) && p != module+"protocol" }},
		{"proxyproto", func(p string) bool { return strings.HasPrefix(p, module) }},
		{"worker", func(p string) bool { // the wire, the filter's rule, PROXY headers and the access log, never the master
			return strings.HasPrefix(p, module) && !slices.Contains([]string{"protocol", "prefork/acceptfilter", "prefork/proxyproto", "accesslog"}, strings.TrimPrefix(p, module))
		}},
		{".", func(p string) bool {
			return strings.HasPrefix(p, module) && !slices.Contains([]string{"protocol", "cgroup", "prefork/acceptfilter", "prefork/proxyproto"}, strings.TrimPrefix(p, module))
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
	var paths []string
	for _, f := range parsed(t, dir, parser.ImportsOnly) {
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			paths = append(paths, p)
		}
	}
	return paths
}

// exportBudget is the most identifiers prefork may export (issue 12): the
// pool's API, not the wire protocol (package protocol) and not what only
// its tests need. Issue 22's store seam (Store, Stored, Pool.UseStore)
// added two types and a method; issue 23 took it back to 25 by leaving
// unexported the snapshot's line types no client names (listenerInfo,
// zygoteInfo).
const exportBudget = 25

// TestExportBudget counts prefork's exported consts, vars, funcs and types,
// and the exported methods of its exported types, against exportBudget.
func TestExportBudget(t *testing.T) {
	names := exported(t, ".")
	if len(names) > exportBudget {
		t.Errorf("prefork exports %d identifiers, want at most %d:\n%s", len(names), exportBudget, strings.Join(names, "\n"))
	}
}

// exported returns the exported identifiers of the package in dir (test
// files aside): top-level names, and Type.Method for exported methods of
// exported types.
func exported(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for _, f := range parsed(t, dir, parser.SkipObjectResolution) {
		for _, d := range f.Decls {
			names = append(names, declNames(d)...)
		}
	}
	slices.Sort(names)
	return names
}

// declNames returns the exported names d declares.
func declNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			return exportedOnly(d.Name.Name)
		}
		recv := d.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		if id, ok := recv.(*ast.Ident); ok && id.IsExported() && d.Name.IsExported() {
			names = append(names, id.Name+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch spec := spec.(type) {
			case *ast.TypeSpec:
				names = append(names, exportedOnly(spec.Name.Name)...)
			case *ast.ValueSpec:
				for _, id := range spec.Names {
					names = append(names, exportedOnly(id.Name)...)
				}
			}
		}
	}
	return names
}

func exportedOnly(name string) []string {
	if ast.IsExported(name) {
		return []string{name}
	}
	return nil
}

// parsed returns dir's non-test Go files, parsed with mode.
func parsed(t *testing.T, dir string, mode parser.Mode) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestDocFiles: doc.go's file list names every file of the package, and
// doc.go names no file the package does not have.
func TestDocFiles(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "doc.go" {
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(f) + `\b`).Match(doc) {
			t.Errorf("doc.go's file list does not name %s", f)
		}
	}
	for _, m := range regexp.MustCompile(`\b[a-z]+\.go\b`).FindAll(doc, -1) {
		if _, err := os.Stat(string(m)); err != nil {
			t.Errorf("doc.go names %s, which is no file of the package", m)
		}
	}
}

// TestEpollKindsDocumented: docs/architecture.md's table of the loop's epoll
// set names every kind of poller.go's block, and no other.
func TestEpollKindsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "poller.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(id.Name, "kind") {
						kinds = append(kinds, id.Name)
					}
				}
			}
		}
	}
	if len(kinds) == 0 {
		t.Fatal("no kind constants in poller.go")
	}
	documented := regexp.MustCompile("(?m)^\\|[^|\\n]*\\| `(kind\\w+)` \\| ([^\\n]*) \\|$").FindAllSubmatch(doc, -1)
	var got []string
	readable := map[string]string{}
	for _, m := range documented {
		got = append(got, string(m[1]))
		readable[string(m[1])] = string(m[2])
	}
	slices.Sort(kinds)
	slices.Sort(got)
	if !slices.Equal(got, kinds) {
		t.Errorf("docs/architecture.md's epoll table names %v, want poller.go's kinds %v", got, kinds)
	}
	handlers := handledBy(t)
	if len(handlers) < 5 {
		t.Fatalf("got handlers %v from Pool.handle in pool.go, want one per kind it takes: has it moved?", handlers)
	}
	for kind, method := range handlers {
		if cell, ok := readable[kind]; ok && !strings.Contains(cell, "`"+method+"`") {
			t.Errorf("docs/architecture.md's epoll table, %s: %q does not name `%s`, which Pool.handle calls", kind, cell, method)
		}
	}
}

// handledBy returns, for each kind a case of Pool.handle (pool.go) takes,
// the name of the method or function the case calls first.
func handledBy(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "pool.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "handle" || fn.Recv == nil {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok || len(cc.Body) == 0 {
				return true
			}
			var name string
			ast.Inspect(cc.Body[0], func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && name == "" {
					switch fun := call.Fun.(type) {
					case *ast.SelectorExpr:
						name = fun.Sel.Name
					case *ast.Ident:
						name = fun.Name
					}
				}
				return name == ""
			})
			for _, e := range cc.List {
				if id, ok := e.(*ast.Ident); ok && strings.HasPrefix(id.Name, "kind") {
					calls[id.Name] = name
				}
			}
			return false
		})
		return false
	})
	return calls
}
