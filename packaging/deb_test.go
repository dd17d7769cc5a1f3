package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shipped is every file of the actd package with its mode, as dpkg-deb -c
// shows it. No Python or Perl file: those are python3-actd's and
// libplack-handler-actd-perl's (adapterFiles).
var shipped = map[string]string{
	"./usr/bin/actd":                          "-rwxr-xr-x",
	"./usr/lib/systemd/system/actd.socket":    "-rw-r--r--",
	"./usr/lib/systemd/system/actd.service":   "-rw-r--r--",
	"./usr/lib/systemd/system/actd@.socket":   "-rw-r--r--",
	"./usr/lib/systemd/system/actd@.service":  "-rw-r--r--",
	"./etc/actd/actd.conf":                    "-rw-r--r--",
	"./etc/actd/example.conf":                 "-rw-r--r--",
	"./usr/share/man/man8/actd.8.gz":          "-rw-r--r--",
	"./usr/share/doc/actd/copyright":          "-rw-r--r--",
	"./usr/share/doc/actd/changelog.gz":       "-rw-r--r--",
	"./usr/share/doc/actd/README.md":          "-rw-r--r--",
	"./usr/share/doc/actd/protocol.md.gz":     "-rw-r--r--",
	"./usr/share/doc/actd/operations.md.gz":   "-rw-r--r--",
	"./usr/share/doc/actd/architecture.md.gz": "-rw-r--r--",
	"./usr/share/doc/actd/go.md.gz":           "-rw-r--r--",
	"./usr/share/doc/actd/http.md.gz":         "-rw-r--r--",
	"./usr/share/lintian/overrides/actd":      "-rw-r--r--",
}

// packageFiles returns every file package name must ship with its mode:
// shipped for actd; for an adapter its doc directory (copyright, changelog,
// its guide) and its modules, the tree's as they are today (pythonSources,
// perlModules), so a module added to the tree is shipped without a list
// to update here.
func packageFiles(t *testing.T, name string) map[string]string {
	t.Helper()
	if name == "actd" {
		return shipped
	}
	doc := "./usr/share/doc/" + name + "/"
	files := map[string]string{doc + "copyright": "-rw-r--r--", doc + "changelog.gz": "-rw-r--r--"}
	switch name {
	case pythonPackage:
		files[doc+"python.md.gz"] = "-rw-r--r--"
		for _, py := range pythonSources(t) {
			files["./"+pythonDir+"/"+py] = "-rw-r--r--"
		}
	case perlPackage:
		files[doc+"perl.md.gz"] = "-rw-r--r--"
		for _, pm := range perlModules(t) {
			files["./usr/share/perl5/"+pm] = "-rw-r--r--"
		}
	}
	return files
}

// debFiles returns the files of deb with their modes, from dpkg-deb -c;
// it fails t on an owner other than root/root or a directory not 0755.
func debFiles(t *testing.T, deb string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(run(t, "dpkg-deb", "-c", deb)), "\n") {
		f := strings.Fields(line) // mode owner size date time path
		if len(f) < 6 {
			t.Fatalf("dpkg-deb -c line %q", line)
		}
		if f[1] != "root/root" {
			t.Errorf("%s: owner %s, want root/root", f[5], f[1])
		}
		switch f[0][0] {
		case 'd':
			if f[0] != "drwxr-xr-x" {
				t.Errorf("%s: mode %s, want drwxr-xr-x", f[5], f[0])
			}
		default:
			got[f[5]] = f[0]
		}
	}
	return got
}

func TestDebContents(t *testing.T) {
	for _, p := range debPackages {
		t.Run(p.name, func(t *testing.T) {
			got := debFiles(t, buildPackage(t, "", p.name))
			want := packageFiles(t, p.name)
			for path, mode := range want {
				if got[path] != mode {
					t.Errorf("%s: got mode %q, want %q", path, got[path], mode)
				}
			}
			for path := range got {
				if _, ok := want[path]; !ok {
					t.Errorf("%s: shipped, want not", path)
				}
			}
		})
	}
}

// controlField is a field of a package's DEBIAN/control; want "" means absent.
type controlField struct{ name, want string }

func TestDebControl(t *testing.T) {
	version := shippedVersion(t)
	fields := map[string][]controlField{
		"actd": {
			{"Architecture", debArch},
			{"Section", "admin"},
			{"Source", ""}, // the source package's own name
			{"Recommends", "systemd"},
			{"Depends", ""}, // a static binary; init-system-helpers is Essential
			{"Suggests", pythonPackage + ", " + perlPackage},
		},
		// The adapters speak the protocol of this very actd: = VERSION.
		pythonPackage: {
			{"Architecture", "all"},
			{"Section", "python"},
			{"Source", "actd"},
			{"Recommends", ""},
			{"Depends", "python3, actd (= " + version + ")"},
			{"Suggests", ""},
		},
		perlPackage: {
			{"Architecture", "all"},
			{"Section", "perl"},
			{"Source", "actd"},
			{"Recommends", "libio-socket-ssl-perl"}, // HTTPS: Actd::TLS
			{"Depends", "perl, libplack-perl, actd (= " + version + ")"},
			{"Suggests", ""},
		},
	}
	for _, p := range debPackages {
		deb := buildPackage(t, "", p.name)
		common := []controlField{{"Package", p.name}, {"Version", version}, {"Priority", "optional"}, {"Pre-Depends", ""}}
		for _, f := range append(common, fields[p.name]...) {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				if got := strings.TrimSpace(run(t, "dpkg-deb", "-f", deb, f.name)); got != f.want {
					t.Errorf("got %q, want %q", got, f.want)
				}
			})
		}
		t.Run(p.name+"/md5sums", func(t *testing.T) {
			root := extract(t, deb)
			cmd := exec.Command("md5sum", "--check", "--quiet", filepath.Join(root, "DEBIAN/md5sums"))
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("md5sum --check: %v\n%s", err, out)
			}
		})
	}
	t.Run("actd/conffiles", func(t *testing.T) {
		got := strings.Fields(run(t, "dpkg-deb", "-I", buildDeb(t, ""), "conffiles"))
		want := []string{"/etc/actd/actd.conf", "/etc/actd/example.conf"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

// TestMaintainerScriptText checks what the scripts say; the next test runs them.
func TestMaintainerScriptText(t *testing.T) {
	root := extract(t, buildDeb(t, ""))
	cases := []struct {
		script string
		want   []string // lines the script must hold
	}{
		{"postinst", []string{
			"\t\tdeb-systemd-helper update-state \"$unit\" >/dev/null || true",
			"\t\tsystemctl --system daemon-reload >/dev/null || true",
			"\t\t\tdeb-systemd-invoke try-restart actd.service 'actd@*.service' >/dev/null || true",
		}},
		{"prerm", []string{
			"\tdeb-systemd-invoke stop actd.socket actd.service 'actd@*.socket' 'actd@*.service' >/dev/null || true",
		}},
		{"postrm", []string{
			"\t\tsystemctl --system daemon-reload >/dev/null || true",
			"\tdeb-systemd-helper mask actd.socket actd.service >/dev/null || true",
			"\t\tdeb-systemd-helper purge actd.socket actd.service >/dev/null || true",
		}},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			lines, data := scriptLines(t, root, c.script, c.want...)
			// The Python package's byte code is python3-actd's business.
			for _, py := range []string{"py3compile", "py3clean"} {
				if strings.Contains(data, py) {
					t.Errorf("runs %s, want that in %s's scripts only", py, pythonPackage)
				}
			}
			// A socket is never (re)started by the package: on upgrade
			// it must stay open, on install nothing listens by surprise.
			for i, l := range lines {
				if strings.Contains(l, "deb-systemd-invoke") && strings.Contains(l, ".socket") && !strings.Contains(l, " stop ") {
					t.Errorf("line %d %q: starts a socket", i+1, l)
				}
			}
		})
	}
}

// scriptLines checks the maintainer script DEBIAN/name under root: mode
// 0755, sh -n clean, and the lines #!/bin/sh, set -e and each of want
// present. It returns its lines and its text.
func scriptLines(t *testing.T, root, name string, want ...string) ([]string, string) {
	t.Helper()
	path := filepath.Join(root, "DEBIAN", name)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", info.Mode().Perm())
	}
	run(t, "sh", "-n", path)
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	for _, w := range append([]string{"#!/bin/sh", "set -e"}, want...) {
		if !slices.Contains(lines, w) {
			t.Errorf("got no line %q", w)
		}
	}
	return lines, string(data)
}
