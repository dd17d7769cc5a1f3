package perl_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCPAN: perl/ is a CPAN distribution (Plack-Handler-Actd). In a copy
// of it, `perl Makefile.PL && make && make test` passes, MANIFEST lists
// every file of the distribution and no other (make distcheck) and is
// enough to build and test it (make disttest); cpanfile names the
// prerequisites Makefile.PL does; and `prove -l t` passes from perl/
// itself, t/suite.t included (under a real actd).
func TestCPAN(t *testing.T) {
	needPlack(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skipf("make needed (Debian package make): %v", err)
	}
	dir := copyTree(t, ".", t.TempDir())
	for _, step := range []struct {
		command []string
		tests   bool // runs the tests: says "Result: PASS"
	}{
		{[]string{"perl", "Makefile.PL"}, false},
		{[]string{"make"}, false},
		{[]string{"make", "test"}, true},
		{[]string{"make", "distcheck"}, false},
		{[]string{"make", "disttest"}, true},
	} {
		name := strings.Join(step.command, " ")
		out := runIn(t, dir, nil, step.command...)
		if step.tests && !strings.Contains(out, "Result: PASS") {
			t.Errorf("%s: got no \"Result: PASS\", want one\n%s", name, out)
		}
		if m := regexp.MustCompile(`(?m)^(Not in MANIFEST|No such file): .*$`).FindAllString(out, -1); m != nil {
			t.Errorf("%s: got %q, want MANIFEST to match the distribution", name, m)
		}
	}
	t.Run("cpanfile", func(t *testing.T) {
		got := cpanfilePrereqs(t, "cpanfile")
		want := metaPrereqs(t, filepath.Join(dir, "MYMETA.json"))
		if !maps.Equal(got, want) {
			t.Errorf("cpanfile: got %v, want Makefile.PL's %v", got, want)
		}
	})
	t.Run("prove -l t", func(t *testing.T) {
		out := runIn(t, ".", []string{"ACTD=" + actd}, "prove", "-l", "t")
		if !strings.Contains(out, "Result: PASS") || strings.Contains(out, "skipped") {
			t.Errorf("prove -l t: got a failed or skipped script, want none\n%s", out)
		}
	})
}

// runIn runs command in dir with env added, within suiteBound, and
// returns its output; a failure ends the test.
func runIn(t *testing.T, dir string, env []string, command ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), suiteBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v, want exit status 0\n%s", strings.Join(command, " "), err, out)
	}
	return string(out)
}

// copyTree copies the regular files under src to dst, keeping their
// modes, and returns dst.
func copyTree(t *testing.T, src, dst string) string {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == src {
			return err
		}
		target := filepath.Join(dst, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Mkdir(target, info.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// cpanfilePrereqs returns the prerequisites a cpanfile names, as
// "phase relationship module" => version ("0" when it names none).
func cpanfilePrereqs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^\s*(requires|recommends)\s+'([^']+)'(?:\s*,\s*'([^']+)')?\s*;`)
	prereqs := map[string]string{}
	phase := "runtime"
	for _, l := range strings.Split(string(b), "\n") {
		if m := regexp.MustCompile(`^\s*on\s+(\w+)\s*=>`).FindStringSubmatch(l); m != nil {
			phase = m[1]
		} else if strings.HasPrefix(strings.TrimSpace(l), "};") {
			phase = "runtime"
		} else if m := line.FindStringSubmatch(l); m != nil {
			version := m[3]
			if version == "" {
				version = "0"
			}
			prereqs[phase+" "+m[1]+" "+m[2]] = version
		}
	}
	return prereqs
}

// metaPrereqs returns the runtime and test prerequisites of a META.json
// (spec 2), keyed as cpanfilePrereqs does.
func metaPrereqs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Prereqs map[string]map[string]map[string]string `json:"prereqs"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	prereqs := map[string]string{}
	for _, phase := range []string{"runtime", "test"} {
		for relationship, modules := range meta.Prereqs[phase] {
			for module, version := range modules {
				prereqs[phase+" "+relationship+" "+module] = version
			}
		}
	}
	return prereqs
}
