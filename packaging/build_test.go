package packaging

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// debArch is the architecture build.sh builds by default.
const debArch = "amd64"

var (
	buildMu sync.Mutex
	builds  = map[string]string{} // version ("" for VERSION) -> .deb path
)

// buildDeb runs deb/build.sh once per version ("" for the VERSION file) and
// returns the path of the .deb; it skips the test without dpkg-deb.
func buildDeb(t *testing.T, version string) string {
	t.Helper()
	needTool(t, "dpkg-deb", "dpkg")
	buildMu.Lock()
	defer buildMu.Unlock()
	if deb, ok := builds[version]; ok {
		return deb
	}
	out := filepath.Join(buildDir, "v"+version)
	deb, err := runBuild(out, version)
	if err != nil {
		t.Fatal(err)
	}
	builds[version] = deb
	return deb
}

// runBuild runs deb/build.sh OUTDIR and returns the last line of its stdout.
func runBuild(outdir, version string) (string, error) {
	cmd := exec.Command("sh", "deb/build.sh", outdir)
	cmd.Env = append(os.Environ(), "ACTD_VERSION="+version)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", &buildError{err, stderr.String()}
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return lines[len(lines)-1], nil
}

type buildError struct {
	err    error
	stderr string
}

func (e *buildError) Error() string { return "deb/build.sh: " + e.err.Error() + "\n" + e.stderr }
func (e *buildError) Unwrap() error { return e.err }

// shippedVersion is the content of VERSION at the repository root.
func shippedVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// extract unpacks deb into a new directory and returns it.
func extract(t *testing.T, deb string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, "dpkg-deb", "-x", deb, dir)
	run(t, "dpkg-deb", "-e", deb, filepath.Join(dir, "DEBIAN"))
	return dir
}

// run runs a command that must succeed and returns its stdout.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

func TestBuildVersions(t *testing.T) {
	cases := []struct {
		name    string
		env     string // ACTD_VERSION
		version string // "": the VERSION file
	}{
		{"VERSION file", "", ""},
		{"ACTD_VERSION upgrade", "0.1.1", "0.1.1"},
		{"ACTD_VERSION with revision", "0.1.0-2", "0.1.0-2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.version
			if want == "" {
				want = shippedVersion(t)
			}
			deb := buildDeb(t, c.env)
			if got, wantName := filepath.Base(deb), "actd_"+want+"_"+debArch+".deb"; got != wantName {
				t.Errorf("got %s, want %s", got, wantName)
			}
			if got := strings.TrimSpace(run(t, "dpkg-deb", "-f", deb, "Version")); got != want {
				t.Errorf("Version: got %q, want %q", got, want)
			}
			root := extract(t, deb)
			log := "changelog.gz"
			if strings.Contains(want, "-") {
				log = "changelog.Debian.gz"
			}
			top := strings.SplitN(run(t, "zcat", filepath.Join(root, "usr/share/doc/actd", log)), "\n", 2)[0]
			if wantTop := "actd (" + want + ") unstable; urgency=medium"; top != wantTop {
				t.Errorf("changelog: got %q, want %q", top, wantTop)
			}
			if !canRun() {
				t.Skipf("cannot run an %s binary here", debArch)
			}
			if got, wantOut := run(t, filepath.Join(root, "usr/bin/actd"), "version"), "actd "+want+"\n"; got != wantOut {
				t.Errorf("actd version: got %q, want %q", got, wantOut)
			}
		})
	}
}

func TestBuildRejectsBadVersion(t *testing.T) {
	for _, v := range []string{"v1.0", "1.0 beta", "1/0", "1_0"} {
		t.Run(v, func(t *testing.T) {
			_, err := runBuild(t.TempDir(), v)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 64 {
				t.Fatalf("ACTD_VERSION=%q: got %v, want exit status 64", v, err)
			}
		})
	}
}

// TestBuildIsReproducible builds twice back to back (a tree that someone
// edits between the two builds differs, rightly).
func TestBuildIsReproducible(t *testing.T) {
	needTool(t, "dpkg-deb", "dpkg")
	first, err := runBuild(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := runBuild(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Errorf("two builds of one tree differ: %d and %d bytes", len(a), len(b))
	}
}
