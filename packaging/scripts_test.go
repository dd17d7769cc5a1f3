package packaging

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maintRoot is an installed package under DPKG_ROOT: the maintainer scripts
// and deb-systemd-helper act on root only, and run no systemctl.
type maintRoot struct {
	t    *testing.T
	root string
	deb  string
}

// script runs DEBIAN/name with args as dpkg would.
func (m *maintRoot) script(name string, args ...string) {
	m.t.Helper()
	cmd := exec.Command("sh", append([]string{filepath.Join(m.root, "DEBIAN", name)}, args...)...)
	cmd.Env = append(os.Environ(), "DPKG_ROOT="+m.root,
		"DPKG_MAINTSCRIPT_PACKAGE=actd", "DPKG_MAINTSCRIPT_NAME="+name)
	if out, err := cmd.CombinedOutput(); err != nil {
		m.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// unpack puts the package's files in place; removeFiles takes the units away,
// as dpkg does between prerm and postrm.
func (m *maintRoot) unpack() { run(m.t, "dpkg-deb", "-x", m.deb, m.root) }
func (m *maintRoot) removeFiles() {
	units, _ := filepath.Glob(filepath.Join(m.root, unitDir, "actd*"))
	for _, u := range units {
		os.Remove(u)
	}
}

// enable makes the links "systemctl enable" makes, for unit in sockets.target.
func (m *maintRoot) enable(unit, file string) {
	dir := filepath.Join(m.root, "etc/systemd/system/sockets.target.wants")
	mustMkdir(m.t, dir)
	if err := os.Symlink("/usr/lib/systemd/system/"+file, filepath.Join(dir, unit)); err != nil {
		m.t.Fatal(err)
	}
}

// state lists the symlinks under /etc/systemd/system as "path -> target" and
// the files deb-systemd-helper keeps under /var/lib/systemd.
func (m *maintRoot) state() []string {
	var got []string
	for _, dir := range []string{"etc/systemd/system", "var/lib/systemd"} {
		filepath.WalkDir(filepath.Join(m.root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(m.root, path)
			if target, err := os.Readlink(path); err == nil {
				rel += " -> " + target
			}
			got = append(got, rel)
			return nil
		})
	}
	slices.Sort(got)
	return got
}

const (
	wantsSocket = "etc/systemd/system/sockets.target.wants/actd.socket -> /usr/lib/systemd/system/actd.socket"
	wantsPool   = "etc/systemd/system/sockets.target.wants/actd@web.socket -> /usr/lib/systemd/system/actd@.socket"
	maskSocket  = "etc/systemd/system/actd.socket -> /dev/null"
	maskService = "etc/systemd/system/actd.service -> /dev/null"
	dshSocket   = "var/lib/systemd/deb-systemd-helper-enabled/actd.socket.dsh-also"
	dshService  = "var/lib/systemd/deb-systemd-helper-enabled/actd.service.dsh-also"
	dshWants    = "var/lib/systemd/deb-systemd-helper-enabled/sockets.target.wants/actd.socket"
	dshMaskSock = "var/lib/systemd/deb-systemd-helper-masked/actd.socket"
	dshMaskSvc  = "var/lib/systemd/deb-systemd-helper-masked/actd.service"
)

// TestMaintainerScriptLifecycle installs, enables, upgrades, removes,
// reinstalls and purges under DPKG_ROOT and checks the links after each step.
// Starting and stopping units needs a running systemd: test/integration.
func TestMaintainerScriptLifecycle(t *testing.T) {
	needTool(t, "deb-systemd-helper", "init-system-helpers")
	m := &maintRoot{t: t, root: t.TempDir(), deb: buildDeb(t, "")}
	m.unpack()
	run(t, "dpkg-deb", "-e", m.deb, filepath.Join(m.root, "DEBIAN"))
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"install enables nothing", func() { m.script("postinst", "configure", "") },
			[]string{dshService, dshSocket}},
		{"admin enables the socket and a pool", func() {
			m.enable("actd.socket", "actd.socket")
			m.enable("actd@web.socket", "actd@.socket")
		}, []string{dshService, dshSocket, wantsSocket, wantsPool}},
		{"upgrade keeps them enabled", func() {
			m.script("prerm", "upgrade", "0.1.1")
			m.unpack()
			m.script("postinst", "configure", "0.1.0")
		}, []string{dshService, dshSocket, dshWants, wantsSocket, wantsPool}},
		{"remove masks the units", func() {
			m.script("prerm", "remove")
			m.removeFiles()
			m.script("postrm", "remove")
		}, []string{maskService, maskSocket, dshService, dshSocket, dshWants, dshMaskSvc, dshMaskSock, wantsSocket, wantsPool}},
		{"reinstall unmasks them", func() {
			m.unpack()
			m.script("postinst", "configure", "0.1.0")
		}, []string{dshService, dshSocket, dshWants, wantsSocket, wantsPool}},
		{"purge removes every link", func() {
			m.script("prerm", "remove")
			m.removeFiles()
			m.script("postrm", "remove")
			m.script("postrm", "purge")
		}, nil},
	}
	for _, s := range steps {
		s.do()
		got := m.state()
		want := slices.Sorted(slices.Values(s.want))
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\ngot  %q\nwant %q", s.name, got, want)
		}
	}
}
