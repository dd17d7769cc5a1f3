package python_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/actd/actd/internal/pooltest"
)

// TestPipInstallIntoVenv: `pip install ./python` from the checkout puts
// the adapter into a fresh virtualenv (offline: --no-index, and
// --no-build-isolation with the interpreter's own setuptools), and a pool
// whose worker is that virtualenv's python serves from it, with no
// PYTHONPATH (docs/python.md, "Install"). It skips where no python3 has
// venv, pip and a setuptools that builds wheels.
func TestPipInstallIntoVenv(t *testing.T) {
	py := pipPython(t)
	venv := filepath.Join(t.TempDir(), "venv")
	run(t, "", py, "-m", "venv", "--system-site-packages", venv) // setuptools from the interpreter: offline
	vpy := filepath.Join(venv, "bin", "python")
	src := t.TempDir() // a copy: setuptools writes build/ and *.egg-info beside pyproject.toml
	if err := os.CopyFS(src, os.DirFS(".")); err != nil {
		t.Fatal(err)
	}
	run(t, "", vpy, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-cache-dir", src)
	outside := t.TempDir() // not the checkout, so nothing imports python/actd by its path
	if out := run(t, outside, vpy, "-c", "import actd.wsgi, os; print(os.path.dirname(actd.__file__))"); !strings.HasPrefix(out, venv) {
		t.Errorf("actd imported from %q, want from the virtualenv %s", out, venv)
	}

	app := filepath.Join(outside, "hello.py")
	if err := os.WriteFile(app, []byte("def app(environ, start_response):\n"+
		"    start_response('200 OK', [('Content-Type', 'text/plain')])\n"+
		"    return [b'from the venv']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := pooltest.FreeAddr(t)
	control := filepath.Join(t.TempDir(), "ctl.sock")
	cmd := exec.Command(pooltest.Actd(t), "--listen", addr, "--control-socket", control, "--log-format", "text",
		"--start-timeout", "60s", "--", vpy, "-m", "actd.wsgi", "hello:app")
	cmd.Dir = outside
	cmd.Env = append(withoutPythonPath(os.Environ()), "PYTHONDONTWRITEBYTECODE=1")
	p := &pool{Proc: pooltest.Start(t, cmd, control, readyBound), addr: addr}
	if _, err := p.WaitStatus(pooltest.Ready); err != nil {
		t.Fatalf("pool not ready: %v\n%s", err, p.LogText(t))
	}
	got, err := exchange(addr, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
	if err != nil || len(got) != 1 || got[0].body != "from the venv" {
		t.Errorf("got %+v, %v; want one reply \"from the venv\"", got, err)
	}
}

// canBuild imports what an offline `pip install --no-build-isolation` of
// the adapter needs: venv and ensurepip for the virtualenv, setuptools, and
// wheel where setuptools is older than 70.1 (which builds wheels itself).
const canBuild = `import venv, ensurepip, setuptools
try:
    import wheel
except ImportError:
    from setuptools.command import bdist_wheel`

// pipPython returns Debian's python3 or the python3 on PATH, the first
// that can build the adapter offline (canBuild), or skips the test.
func pipPython(t *testing.T) string {
	t.Helper()
	var why []string
	for _, name := range []string{debianPython, "python3"} {
		py, err := exec.LookPath(name)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		out, err := exec.Command(py, "-c", canBuild).CombinedOutput()
		if err == nil {
			return py
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		why = append(why, py+": "+lines[len(lines)-1])
	}
	t.Skipf("no python3 can pip install the adapter offline (Debian: python3-venv, python3-setuptools, python3-wheel): %s", strings.Join(why, "; "))
	return ""
}

// TestPyprojectVersion: python/pyproject.toml has the repository's VERSION.
func TestPyprojectVersion(t *testing.T) {
	want, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile("pyproject.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version = "([^"]+)"`).FindSubmatch(toml)
	if m == nil || string(m[1]) != strings.TrimSpace(string(want)) {
		t.Errorf("pyproject.toml version: got %q, want %q (VERSION)", m, strings.TrimSpace(string(want)))
	}
}

// run runs argv in dir ("": here) and returns its trimmed stdout, failing
// the test with its output on an error.
func run(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(withoutPythonPath(os.Environ()), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(argv, " "), err, out, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// withoutPythonPath is env without PYTHONPATH.
func withoutPythonPath(env []string) []string {
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PYTHONPATH=") {
			kept = append(kept, kv)
		}
	}
	return kept
}
