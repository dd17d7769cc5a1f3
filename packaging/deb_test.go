package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shipped is every file of the package with its mode, as dpkg-deb -c shows it.
var shipped = map[string]string{
	"./usr/bin/actd":                                   "-rwxr-xr-x",
	"./usr/lib/systemd/system/actd.socket":             "-rw-r--r--",
	"./usr/lib/systemd/system/actd.service":            "-rw-r--r--",
	"./usr/lib/systemd/system/actd@.socket":            "-rw-r--r--",
	"./usr/lib/systemd/system/actd@.service":           "-rw-r--r--",
	"./etc/actd/actd.conf":                             "-rw-r--r--",
	"./etc/actd/example.conf":                          "-rw-r--r--",
	"./usr/share/man/man8/actd.8.gz":                   "-rw-r--r--",
	"./usr/share/doc/actd/copyright":                   "-rw-r--r--",
	"./usr/share/doc/actd/changelog.gz":                "-rw-r--r--",
	"./usr/share/doc/actd/README.md":                   "-rw-r--r--",
	"./usr/share/doc/actd/protocol.md.gz":              "-rw-r--r--",
	"./usr/share/doc/actd/operations.md.gz":            "-rw-r--r--",
	"./usr/share/doc/actd/architecture.md.gz":          "-rw-r--r--",
	"./usr/share/doc/actd/go.md.gz":                    "-rw-r--r--",
	"./usr/share/lintian/overrides/actd":               "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/__init__.py": "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/channel.py":  "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/http.py":     "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/report.py":   "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/response.py": "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/worker.py":   "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/wsgi.py":     "-rw-r--r--",
	"./usr/lib/python3/dist-packages/actd/zygote.py":   "-rw-r--r--",
	"./usr/share/doc/actd/python.md.gz":                "-rw-r--r--",

	"./usr/lib/python3/dist-packages/actd/connection.py": "-rw-r--r--",
}

func TestDebContents(t *testing.T) {
	deb := buildDeb(t, "")
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
	for path, mode := range shipped {
		if got[path] != mode {
			t.Errorf("%s: got mode %q, want %q", path, got[path], mode)
		}
	}
	for path := range got {
		if _, ok := shipped[path]; !ok {
			t.Errorf("%s: shipped, want not", path)
		}
	}
}

func TestDebControl(t *testing.T) {
	deb := buildDeb(t, "")
	fields := []struct{ name, want string }{
		{"Package", "actd"},
		{"Version", shippedVersion(t)},
		{"Architecture", debArch},
		{"Section", "admin"},
		{"Priority", "optional"},
		{"Recommends", "systemd"},
		{"Depends", ""}, // a static binary; init-system-helpers is Essential
		{"Pre-Depends", ""},
	}
	for _, f := range fields {
		t.Run(f.name, func(t *testing.T) {
			if got := strings.TrimSpace(run(t, "dpkg-deb", "-f", deb, f.name)); got != f.want {
				t.Errorf("got %q, want %q", got, f.want)
			}
		})
	}
	t.Run("conffiles", func(t *testing.T) {
		got := strings.Fields(run(t, "dpkg-deb", "-I", deb, "conffiles"))
		want := []string{"/etc/actd/actd.conf", "/etc/actd/example.conf"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("md5sums", func(t *testing.T) {
		root := extract(t, deb)
		cmd := exec.Command("md5sum", "--check", "--quiet", filepath.Join(root, "DEBIAN/md5sums"))
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("md5sum --check: %v\n%s", err, out)
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
			path := filepath.Join(root, "DEBIAN", c.script)
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
			for _, w := range append([]string{"#!/bin/sh", "set -e"}, c.want...) {
				if !slices.Contains(lines, w) {
					t.Errorf("got no line %q", w)
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
