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

// TestDebShipsPython: the package carries python/actd's sources, byte for
// byte, and no byte-compiled file (Debian Python policy: those are made on
// the machine by postinst's py3compile), and Debian's python3 imports the
// WSGI server from the installed tree.
func TestDebShipsPython(t *testing.T) {
	root := extract(t, buildDeb(t, ""))
	want, err := filepath.Glob("../python/actd/*.py")
	if err != nil || len(want) == 0 {
		t.Fatalf("python/actd: %v, %d files", err, len(want))
	}
	entries, err := os.ReadDir(filepath.Join(root, pythonDir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	var names []string
	for _, w := range want {
		names = append(names, filepath.Base(w))
		shipped, err := os.ReadFile(filepath.Join(root, pythonDir, filepath.Base(w)))
		tree, _ := os.ReadFile(w)
		if err != nil || string(shipped) != string(tree) {
			t.Errorf("%s/%s: not as python/actd/%s (%v)", pythonDir, filepath.Base(w), filepath.Base(w), err)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("%s: got %q, want %q (sources only, no __pycache__)", pythonDir, got, names)
	}
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

// TestMaintainerScriptsCompilePython: postinst byte-compiles the package
// and prerm removes what it made, as dh_python3's scripts do, only where
// python3 is installed and never under DPKG_ROOT.
func TestMaintainerScriptsCompilePython(t *testing.T) {
	root := extract(t, buildDeb(t, ""))
	cases := []struct{ script, want string }{
		{"postinst", "\t\tpy3compile -p actd"},
		{"prerm", "\tpy3clean -p actd"},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, "DEBIAN", c.script))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
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
