package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pythonDir is where Debian's python3 finds public modules, and where
// dh_python3 puts a pure Python package.
const pythonDir = "usr/lib/python3/dist-packages/actd"

// pythonSources returns the base names of python/actd/*.py, sorted: what
// python3-actd ships in pythonDir.
func pythonSources(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../python/actd/*.py")
	if err != nil || len(files) == 0 {
		t.Fatalf("python/actd: %v, %d files", err, len(files))
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

// TestDebShipsPython: python3-actd carries python/actd's sources, byte for
// byte, and no byte-compiled file (Debian Python policy: those are made on
// the machine by postinst's py3compile), and Debian's python3 imports the
// WSGI server from the installed tree.
func TestDebShipsPython(t *testing.T) {
	root := extract(t, buildPackage(t, "", pythonPackage))
	want := pythonSources(t)
	entries, err := os.ReadDir(filepath.Join(root, pythonDir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q (sources only, no __pycache__)", pythonDir, got, want)
	}
	for _, py := range want {
		shipped, err := os.ReadFile(filepath.Join(root, pythonDir, py))
		if tree := readDoc(t, "../python/actd/"+py); err != nil || string(shipped) != tree {
			t.Errorf("%s/%s: not as python/actd/%s (%v)", pythonDir, py, py, err)
		}
	}
	t.Run("python.md", func(t *testing.T) {
		got := run(t, "zcat", filepath.Join(root, "usr/share/doc", pythonPackage, "python.md.gz"))
		if want := readDoc(t, "../docs/python.md"); got != want {
			t.Errorf("python.md.gz: got %d bytes, want docs/python.md (%d bytes)", len(got), len(want))
		}
	})
	t.Run("import", func(t *testing.T) {
		python := "/usr/bin/python3"
		if _, err := os.Stat(python); err != nil {
			t.Skip("no /usr/bin/python3 (Debian package python3)")
		}
		cmd := exec.Command(python, "-B", "-c", "import actd.wsgi, actd.worker; print(actd.__file__)")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "usr/lib/python3/dist-packages"))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), filepath.Join(root, pythonDir)) {
			t.Errorf("import actd from the package: got %s, %v; want it found in %s", out, err, pythonDir)
		}
	})
}

// TestMaintainerScriptsCompilePython: python3-actd's postinst
// byte-compiles the package and its prerm removes what it made, as
// dh_python3's scripts do, only where python3 is installed and never under
// DPKG_ROOT. test/integration's TestPythonPool runs them under dpkg.
func TestMaintainerScriptsCompilePython(t *testing.T) {
	root := extract(t, buildPackage(t, "", pythonPackage))
	cases := []struct{ script, want string }{
		{"postinst", "\tpy3compile -p " + pythonPackage},
		{"prerm", "\tpy3clean -p " + pythonPackage},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			lines, _ := scriptLines(t, root, c.script, c.want)
			i := slices.Index(lines, c.want)
			if i < 1 || !strings.Contains(lines[i-1], `[ -z "${DPKG_ROOT:-}" ] && command -v`) {
				t.Errorf("got no line %q after a DPKG_ROOT and command -v check", c.want)
			}
		})
	}
	t.Run("py3compile", func(t *testing.T) {
		if _, err := exec.LookPath("py3compile"); err != nil {
			t.Skip("no py3compile (Debian package python3)")
		}
		dir := filepath.Join(root, pythonDir)
		if out, err := exec.Command("py3compile", dir).CombinedOutput(); err != nil {
			t.Fatalf("py3compile %s: %v\n%s", dir, err, out)
		}
		pyc, _ := filepath.Glob(filepath.Join(dir, "__pycache__", "wsgi.cpython-*.pyc"))
		if len(pyc) == 0 {
			t.Errorf("py3compile %s: got no __pycache__/wsgi.cpython-*.pyc", dir)
		}
	})
}
