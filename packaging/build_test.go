package packaging

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// debArch is the architecture build.sh builds actd for by default.
const debArch = "amd64"

// The packages of the language adapters (Debian's naming: python3-MODULE,
// libMODULE-NAME-perl), architecture all.
const (
	pythonPackage = "python3-actd"
	perlPackage   = "libplack-handler-actd-perl"
)

// debPackage is one binary package build.sh builds.
type debPackage struct{ name, arch string }

// debPackages are the packages build.sh builds, in the order it prints
// their paths: actd's is the last line.
var debPackages = []debPackage{{pythonPackage, "all"}, {perlPackage, "all"}, {"actd", debArch}}

var (
	buildMu sync.Mutex
	builds  = map[string]map[string]string{} // version ("" for VERSION) -> package -> .deb path
)

// buildDeb returns the path of the actd .deb of version ("" for the VERSION
// file); see buildPackage.
func buildDeb(t *testing.T, version string) string {
	t.Helper()
	return buildPackage(t, version, "actd")
}

// buildPackage runs deb/build.sh once per version ("" for the VERSION file)
// and returns the path of package name's .deb; it skips the test without
// dpkg-deb and fails it when the build does or prints no such package.
func buildPackage(t *testing.T, version, name string) string {
	t.Helper()
	needTool(t, "dpkg-deb", "dpkg")
	buildMu.Lock()
	defer buildMu.Unlock()
	if builds[version] == nil {
		debs, err := runBuild(filepath.Join(buildDir, "v"+version), version)
		if err != nil {
			t.Fatal(err)
		}
		builds[version] = byPackage(debs)
	}
	deb, ok := builds[version][name]
	if !ok {
		t.Fatalf("deb/build.sh built %v, want a package %s", builds[version], name)
	}
	return deb
}

// byPackage maps each .deb path to its package name, the file name up to
// the first "_".
func byPackage(debs []string) map[string]string {
	m := map[string]string{}
	for _, deb := range debs {
		name, _, _ := strings.Cut(filepath.Base(deb), "_")
		m[name] = deb
	}
	return m
}

// runBuild runs deb/build.sh OUTDIR and returns the lines of its stdout,
// the paths of the packages it built.
func runBuild(outdir, version string) ([]string, error) {
	cmd := exec.Command("sh", "deb/build.sh", outdir)
	cmd.Env = append(os.Environ(), "ACTD_VERSION="+version)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, &buildError{err, stderr.String()}
	}
	return strings.Split(strings.TrimSpace(stdout.String()), "\n"), nil
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
		want := c.version
		if want == "" {
			want = shippedVersion(t)
		}
		for _, p := range debPackages {
			t.Run(c.name+"/"+p.name, func(t *testing.T) {
				checkBuiltVersion(t, buildPackage(t, c.env, p.name), p, want)
			})
		}
		t.Run(c.name+"/actd version", func(t *testing.T) {
			if !canRun() {
				t.Skipf("cannot run an %s binary here", debArch)
			}
			root := extract(t, buildDeb(t, c.env))
			if got, wantOut := run(t, filepath.Join(root, "usr/bin/actd"), "version"), "actd "+want+"\n"; got != wantOut {
				t.Errorf("actd version: got %q, want %q", got, wantOut)
			}
		})
	}
}

// checkBuiltVersion checks that deb, package p, is named for version want,
// says it in its Version: field, and carries the source changelog (native
// or Debian, after the version) with want's entry on top.
func checkBuiltVersion(t *testing.T, deb string, p debPackage, want string) {
	t.Helper()
	if got, wantName := filepath.Base(deb), p.name+"_"+want+"_"+p.arch+".deb"; got != wantName {
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
	top := strings.SplitN(run(t, "zcat", filepath.Join(root, "usr/share/doc", p.name, log)), "\n", 2)[0]
	if wantTop := "actd (" + want + ") unstable; urgency=medium"; top != wantTop {
		t.Errorf("%s: got %q, want %q", log, top, wantTop)
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
// edits between the two builds differs, rightly); every package must come
// out the same bytes, and stdout must list them in debPackages' order.
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
	// stdout is the paths in debPackages' order: the last line is actd's,
	// as it was when build.sh built actd alone.
	var names, want []string
	for _, deb := range first {
		names = append(names, filepath.Base(deb))
	}
	for _, p := range debPackages {
		want = append(want, p.name+"_"+shippedVersion(t)+"_"+p.arch+".deb")
	}
	if !slices.Equal(names, want) || len(again) != len(first) {
		t.Fatalf("build.sh stdout: got %q and %d lines, want %q twice", names, len(again), want)
	}
	for i := range first {
		a, _ := os.ReadFile(first[i])
		b, _ := os.ReadFile(again[i])
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: two builds of one tree differ: %d and %d bytes", filepath.Base(first[i]), len(a), len(b))
		}
	}
}
