// Package actd_test checks the repository's modules: the product's go.mod
// requires only what actd uses (the benchmark suite is its own module,
// bench/go.mod), the workspace (go.work) that lets `go run ./bench` work
// from the root does not change the versions the product builds with, and
// CI runs the README's test command, which covers both modules.
package actd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// benchOnly are module path prefixes that only the benchmark suite needs
// (gonum/plot and its fonts, LaTeX, PDF, SVG and image modules). The
// product's go.mod and go.sum must not name them.
var benchOnly = []string{
	"gonum.org/",
	"codeberg.org/go-fonts/",
	"codeberg.org/go-latex/",
	"codeberg.org/go-pdf/",
	"git.sr.ht/~sbinet/",
	"github.com/ajstarks/",
	"github.com/golang/freetype",
	"golang.org/x/image",
}

// goTool returns the go command, or skips the test without one.
func goTool(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"go", "/usr/local/go/bin/go"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("no go command on PATH or in /usr/local/go/bin (install Go to run this test)")
	return ""
}

// goOutput runs the go command in the repository root with GOWORK set to
// gowork and returns its stdout, failing the test on an error.
func goOutput(t *testing.T, gowork string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Env = append(os.Environ(), "GOWORK="+gowork, "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOWORK=%s go %s: %v\n%s", gowork, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func benchOnlyModule(path string) bool {
	return slices.ContainsFunc(benchOnly, func(prefix string) bool { return strings.HasPrefix(path, prefix) })
}

func TestGoModRequiresNoBenchModules(t *testing.T) {
	var mod struct{ Require []struct{ Path string } }
	if err := json.Unmarshal(goOutput(t, "off", "mod", "edit", "-json", "go.mod"), &mod); err != nil {
		t.Fatal(err)
	}
	if len(mod.Require) == 0 {
		t.Fatal("go.mod: got no requirements, want the product's (go-systemd at least)")
	}
	for _, r := range mod.Require {
		if benchOnlyModule(r.Path) {
			t.Errorf("go.mod requires %s, want it only in bench/go.mod", r.Path)
		}
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(sum)) {
		if path, _, _ := strings.Cut(line, " "); benchOnlyModule(path) {
			t.Errorf("go.sum names %s, want it only in bench/go.sum", path)
		}
	}
}

// TestWorkspaceKeepsProductVersions builds the product's package list with
// and without the workspace: a bench requirement that raised a module the
// product shares (golang.org/x/sys) would show as a different version.
func TestWorkspaceKeepsProductVersions(t *testing.T) {
	work, err := filepath.Abs("go.work")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(work); err != nil {
		t.Skipf("no workspace: %v", err)
	}
	list := []string{"list", "-deps", "-tags", "integration", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}", "./..."}
	alone := modules(goOutput(t, "off", list...))
	inWork := modules(goOutput(t, work, list...))
	if !slices.Equal(alone, inWork) {
		t.Errorf("modules of the product's packages: got %q in the workspace, want %q as with GOWORK=off", inWork, alone)
	}
	for _, m := range alone {
		if benchOnlyModule(m) {
			t.Errorf("the product's packages use %s, want it only in bench", m)
		}
	}
}

// modules returns the distinct non-empty lines of go list output, sorted.
func modules(out []byte) []string {
	var ms []string
	for line := range strings.Lines(string(out)) {
		if line = strings.TrimSpace(line); line != "" {
			ms = append(ms, line)
		}
	}
	slices.Sort(ms)
	return slices.Compact(ms)
}

// TestCIRunsTheREADMETestCommand checks that .ci/run runs the command the
// README's Test section gives, and that it tests the bench module too.
func TestCIRunsTheREADMETestCommand(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Test\n")
	_, block, _ := strings.Cut(section, "```sh\n")
	command, _, _ := strings.Cut(block, "\n")
	if !strings.HasPrefix(command, "go test ") || !strings.Contains(command, "./bench/...") {
		t.Fatalf("README's test command: got %q, want a go test of ./... and ./bench/...", command)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), command) {
		t.Errorf(".ci/run: no line %q (the README's test command)", command)
	}
}

// staticcheckTool is the staticcheck command the tools module pins.
const staticcheckTool = "honnef.co/go/tools/cmd/staticcheck"

// TestCIPinsStaticcheck checks that staticcheck is pinned by the tools
// module (.ci/tools/go.mod's tool directive, its hashes in .ci/tools/go.sum,
// the product's go.mod untouched) and that .ci/run builds it from there, not
// by a version fetched by name (go install ...@version).
func TestCIPinsStaticcheck(t *testing.T) {
	var mod struct {
		Tool    []struct{ Path string }
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(goOutput(t, "off", "mod", "edit", "-json", ".ci/tools/go.mod"), &mod); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(mod.Tool, func(tl struct{ Path string }) bool { return tl.Path == staticcheckTool }) {
		t.Errorf(".ci/tools/go.mod: no tool %s", staticcheckTool)
	}
	if !slices.ContainsFunc(mod.Require, func(r struct{ Path, Version string }) bool {
		return r.Path == "honnef.co/go/tools" && r.Version != ""
	}) {
		t.Errorf(".ci/tools/go.mod: requires no version of honnef.co/go/tools")
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "cd .ci/tools && ") || !strings.Contains(string(ci), "go build -o ../bin/staticcheck "+staticcheckTool) {
		t.Errorf(".ci/run: does not build staticcheck in .ci/tools")
	}
	for line := range strings.Lines(string(ci)) {
		if strings.Contains(line, "go install") && strings.Contains(line, "@") {
			t.Errorf(".ci/run: %q fetches a tool by version; pin it in .ci/tools/go.mod", strings.TrimSpace(line))
		}
	}
}
