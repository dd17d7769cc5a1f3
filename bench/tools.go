package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// tools are the programs the suite built for one run, in a work directory.
type tools struct {
	dir           string // work directory: binaries, configs, logs
	actd          string // built actd, or "" (see actdErr)
	actdErr       error
	actdBefore    string // actd built from -actd-before, or "" (see actdBeforeErr)
	actdBeforeErr error
	baseline      string // built bench/baseline
	responder     string // compiled bench/responder, or "" (see responderErr)
	responderErr  error
}

// buildTools builds actd, the baseline and the responder into dir, from the
// repository at root, and with before set also the actd of the checkout
// there. actd is built in its own module with the workspace
// off (GOWORK=off), as packaging/deb/build.sh builds it, and the baseline in
// the bench module. A failed actd or responder build is recorded, not
// returned, so the peers can still be measured; it returns an error only if
// the baseline does not build.
func buildTools(root, dir, before string) (*tools, error) {
	t := &tools{dir: dir}
	goTool := goBinary()
	t.baseline = filepath.Join(dir, "baseline")
	if err := runIn(filepath.Join(root, "bench"), goTool, "build", "-o", t.baseline, "./baseline"); err != nil {
		return nil, fmt.Errorf("build baseline: %w", err)
	}
	t.actd, t.actdErr = buildActd(root, filepath.Join(dir, "actd"))
	if before != "" {
		t.actdBefore, t.actdBeforeErr = buildActd(before, filepath.Join(dir, "actd-before"))
	}
	t.responder = filepath.Join(dir, "responder")
	src := filepath.Join(root, "bench", "responder", "responder.c")
	if t.responderErr = runIn(root, "cc", "-O2", "-o", t.responder, src); t.responderErr != nil {
		t.responder = ""
	}
	return t, nil
}

// buildActd builds ./cmd/actd of the checkout at src into out, in its own
// module with the workspace off. It returns out, or "" and the build error.
func buildActd(src, out string) (string, error) {
	if err := runIn(src, "env", "GOWORK=off", goBinary(), "build", "-o", out, "./cmd/actd"); err != nil {
		return "", err
	}
	return out, nil
}

// goBinary returns the go command: the one on PATH, else /usr/local/go's.
func goBinary() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

// runIn runs a command in dir. It returns nil, or an error carrying the
// command's output.
func runIn(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// repoRoot returns the repository's root: the directory above the working
// directory (or the working directory itself) that holds a go.mod and
// bench/baseline, so both `go run ./bench` at the root and `go run .` in
// bench find it. It returns an error outside the repository.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "bench", "baseline")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the actd repository (no go.mod with bench/baseline above the working directory)")
		}
		dir = parent
	}
}
