//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// buildScript builds the packages: build.sh OUTDIR prints the paths of
// python3-actd's, libplack-handler-actd-perl's and actd's .deb, one a line;
// ACTD_VERSION in its environment sets the version.
const buildScript = "packaging/deb/build.sh"

// The packages of the language adapters, besides actd.
const (
	pythonPackage = "python3-actd"
	perlPackage   = "libplack-handler-actd-perl"
)

// builtDebs holds the packages built by this test binary, one build per
// version ("" is the tree's own version), so that each is built once per run.
var builtDebs struct {
	mu    sync.Mutex
	dir   string
	paths map[string]map[string]string // version -> package -> .deb path
	errs  map[string]error
}

// buildDeb returns the path of the actd .deb for version ("" for the
// default); see buildPackage.
func buildDeb(t *testing.T, version string) string {
	t.Helper()
	return buildPackage(t, version, "actd")
}

// buildPackage returns the path of package name's .deb for version ("" for
// the default), building all packages of that version on first use. It
// skips t when the tools to build a package are missing and fails t when the
// build fails (the error is kept: later tests fail at once instead of
// building again) or made no such package.
func buildPackage(t *testing.T, version, name string) string {
	t.Helper()
	for _, tool := range []string{"dpkg-deb", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not found, cannot build the .deb: %v", tool, err)
		}
	}
	builtDebs.mu.Lock()
	defer builtDebs.mu.Unlock()
	if builtDebs.paths == nil {
		builtDebs.paths = make(map[string]map[string]string)
		builtDebs.errs = make(map[string]error)
	}
	if err, ok := builtDebs.errs[version]; ok {
		t.Fatal(err)
	}
	if builtDebs.paths[version] == nil {
		paths, err := runBuildScript(version)
		if err != nil {
			builtDebs.errs[version] = err
			t.Fatal(err)
		}
		builtDebs.paths[version] = paths
		t.Logf("built %v", paths)
	}
	path, ok := builtDebs.paths[version][name]
	if !ok {
		t.Fatalf("%s built %v, want a package %s", buildScript, builtDebs.paths[version], name)
	}
	return path
}

// runBuildScript runs buildScript from the repository root into a fresh
// directory and returns the .debs' paths by package name, or an error with
// the script's output.
func runBuildScript(version string) (map[string]string, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, fmt.Errorf("build .deb: %w", err)
	}
	script := filepath.Join(root, buildScript)
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("build .deb: %w", err)
	}
	if builtDebs.dir == "" {
		if builtDebs.dir, err = os.MkdirTemp("", "actd-it-deb-"); err != nil {
			return nil, fmt.Errorf("build .deb: %w", err)
		}
	}
	out, err := os.MkdirTemp(builtDebs.dir, "v"+version+"-")
	if err != nil {
		return nil, fmt.Errorf("build .deb: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, out)
	cmd.Dir = root
	cmd.Env = os.Environ()
	if version != "" {
		cmd.Env = append(cmd.Env, "ACTD_VERSION="+version)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s (ACTD_VERSION=%q): %w\n%s%s", buildScript, out, version, err, stdout.Bytes(), stderr.Bytes())
	}
	paths := make(map[string]string)
	for _, path := range strings.Fields(stdout.String()) {
		if !strings.HasSuffix(path, ".deb") {
			return nil, fmt.Errorf("%s: stdout line %q is not a .deb path\n%s", buildScript, path, stderr.Bytes())
		}
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s printed %s: %w", buildScript, path, err)
		}
		name, _, _ := strings.Cut(filepath.Base(path), "_")
		paths[name] = path
	}
	return paths, nil
}

// removeBuiltDebs removes every package this run built.
func removeBuiltDebs() {
	builtDebs.mu.Lock()
	defer builtDebs.mu.Unlock()
	if builtDebs.dir != "" {
		os.RemoveAll(builtDebs.dir)
	}
}

// InstallDeb copies the packages at hostPaths into the box and installs
// them with one dpkg -i; it fails the test when dpkg fails.
func (b *Box) InstallDeb(hostPaths ...string) {
	b.t.Helper()
	args := []string{"dpkg", "-i"}
	for _, hostPath := range hostPaths {
		boxPath := "/var/cache/actd-it/" + filepath.Base(hostPath)
		b.CopyIn(hostPath, boxPath)
		args = append(args, boxPath)
	}
	b.Run(args...)
}

// InstallPackage installs the package name (pythonPackage, perlPackage)
// built from this tree, of the version NewActdBox installs, next to actd.
func (a *ActdBox) InstallPackage(name string) {
	a.t.Helper()
	a.InstallDeb(buildPackage(a.t, "", name))
}
