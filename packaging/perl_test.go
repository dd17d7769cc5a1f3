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

// perlModules returns the Perl handler's files, sorted: every .pm under
// the repository's perl/lib, which libplack-handler-actd-perl installs in
// /usr/share/perl5, Debian's directory for architecture-independent
// modules of packages (perl policy 2.3), at the same relative path.
func perlModules(t *testing.T) []string {
	t.Helper()
	var modules []string
	err := filepath.WalkDir("../perl/lib", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".pm") {
			rel, _ := filepath.Rel("../perl/lib", path)
			modules = append(modules, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil || !slices.Contains(modules, "Plack/Handler/Actd.pm") {
		t.Fatalf("perl/lib: got %q, %v; want Plack/Handler/Actd.pm among them", modules, err)
	}
	return modules
}

// TestDebShipsPerlHandler: libplack-handler-actd-perl carries perl/lib's
// modules byte for byte in /usr/share/perl5 and docs/perl.md, and Perl finds and compiles
// the handler and the epoll syscall numbers from there (the packaged tree
// stands in for /usr/share/perl5). Compiling needs Plack (Debian
// package libplack-perl).
func TestDebShipsPerlHandler(t *testing.T) {
	root := extract(t, buildPackage(t, "", perlPackage))
	for _, m := range perlModules(t) {
		t.Run(m, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join(root, "usr/share/perl5", m))
			if err != nil {
				t.Fatal(err)
			}
			if want := readDoc(t, filepath.Join("../perl/lib", m)); string(got) != want {
				t.Errorf("usr/share/perl5/%s: got %d bytes, want perl/lib/%s (%d bytes)", m, len(got), m, len(want))
			}
		})
	}
	t.Run("perl.md", func(t *testing.T) {
		got := run(t, "zcat", filepath.Join(root, "usr/share/doc", perlPackage, "perl.md.gz"))
		if want := readDoc(t, "../docs/perl.md"); got != want {
			t.Errorf("perl.md.gz: got %d bytes, want docs/perl.md (%d bytes)", len(got), len(want))
		}
	})
	t.Run("compiles", func(t *testing.T) {
		if err := exec.Command("perl", "-MPlack::Util", "-e1").Run(); err != nil {
			t.Skipf("perl with Plack needed (Debian package libplack-perl): %v", err)
		}
		cmd := exec.Command("perl", "-I"+filepath.Join(root, "usr/share/perl5"), "-e",
			"use Plack::Handler::Actd; use Actd::Epoll; use Actd::Zygote; Actd::Epoll::load_numbers(); print $INC{'Plack/Handler/Actd.pm'}")
		cmd.Env = append(os.Environ(), "PERL5LIB=")
		out, err := cmd.CombinedOutput()
		want := filepath.Join(root, "usr/share/perl5/Plack/Handler/Actd.pm")
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("perl -c with the packaged modules: got %v\n%s\nwant success, loaded from %s", err, out, want)
		}
	})
}
