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

// buildScript builds the package: build.sh OUTDIR prints the .deb's path as
// its last line; ACTD_VERSION in its environment sets the version.
const buildScript = "packaging/deb/build.sh"

// builtDebs holds the packages built by this test binary, one per version
// ("" is the tree's own version), so that each is built once per run.
var builtDebs struct {
	mu    sync.Mutex
	dir   string
	paths map[string]string
	errs  map[string]error
}

// buildDeb returns the path of the actd .deb for version ("" for the
// default), building it on first use. It skips t when the tools to build a
// package are missing and fails t when the build fails (the error is kept:
// later tests fail at once instead of building again).
func buildDeb(t *testing.T, version string) string {
	t.Helper()
	for _, tool := range []string{"dpkg-deb", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not found, cannot build the .deb: %v", tool, err)
		}
	}
	builtDebs.mu.Lock()
	defer builtDebs.mu.Unlock()
	if builtDebs.paths == nil {
		builtDebs.paths = make(map[string]string)
		builtDebs.errs = make(map[string]error)
	}
	if path, ok := builtDebs.paths[version]; ok {
		return path
	}
	if err, ok := builtDebs.errs[version]; ok {
		t.Fatal(err)
	}
	path, err := runBuildScript(version)
	if err != nil {
		builtDebs.errs[version] = err
		t.Fatal(err)
	}
	builtDebs.paths[version] = path
	t.Logf("built %s", path)
	return path
}

// runBuildScript runs buildScript from the repository root into a fresh
// directory and returns the .deb's path, or an error with the script's output.
func runBuildScript(version string) (string, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", fmt.Errorf("build .deb: %w", err)
	}
	script := filepath.Join(root, buildScript)
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("build .deb: %w", err)
	}
	if builtDebs.dir == "" {
		if builtDebs.dir, err = os.MkdirTemp("", "actd-it-deb-"); err != nil {
			return "", fmt.Errorf("build .deb: %w", err)
		}
	}
	out, err := os.MkdirTemp(builtDebs.dir, "v"+version+"-")
	if err != nil {
		return "", fmt.Errorf("build .deb: %w", err)
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
		return "", fmt.Errorf("%s %s (ACTD_VERSION=%q): %w\n%s%s", buildScript, out, version, err, stdout.Bytes(), stderr.Bytes())
	}
	path := lastLine(stdout.String())
	if !strings.HasSuffix(path, ".deb") {
		return "", fmt.Errorf("%s: last line of stdout %q is not a .deb path\n%s", buildScript, path, stderr.Bytes())
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s printed %s: %w", buildScript, path, err)
	}
	return path, nil
}

// lastLine returns the last non-empty line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// removeBuiltDebs removes every package this run built.
func removeBuiltDebs() {
	builtDebs.mu.Lock()
	defer builtDebs.mu.Unlock()
	if builtDebs.dir != "" {
		os.RemoveAll(builtDebs.dir)
	}
}

// InstallDeb copies the package at hostPath into the box and installs it
// with dpkg -i; it fails the test when dpkg fails.
func (b *Box) InstallDeb(hostPath string) {
	b.t.Helper()
	boxPath := "/var/cache/actd-it/" + filepath.Base(hostPath)
	b.CopyIn(hostPath, boxPath)
	b.Run("dpkg", "-i", boxPath)
}
