package packaging

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// perlModules are the Perl handler's files: the repository's perl/lib/X
// is installed as /usr/share/perl5/X, Debian's directory for
// architecture-independent modules of packages (perl policy 2.3).
var perlModules = []string{"Plack/Handler/Actd.pm", "Actd/Worker.pm", "Actd/Epoll.pm", "Actd/Zygote.pm"}

// The accept filters' fd passing (Actd::Passfd) ships too.
func init() { perlModules = append(perlModules, "Actd/Passfd.pm") }

// The Perl handler's files join the package's list for TestDebContents.
func init() {
	perl := map[string]string{"./usr/share/doc/actd/perl.md.gz": "-rw-r--r--"}
	for _, m := range perlModules {
		perl["./usr/share/perl5/"+m] = "-rw-r--r--"
	}
	maps.Copy(shipped, perl)
}

// TestDebShipsPerlHandler: the package carries perl/lib's modules byte for
// byte in /usr/share/perl5 and docs/perl.md, and Perl finds and compiles
// the handler and the epoll syscall numbers from there (the packaged tree
// stands in for /usr/share/perl5). Compiling needs Plack (Debian
// package libplack-perl).
func TestDebShipsPerlHandler(t *testing.T) {
	root := extract(t, buildDeb(t, ""))
	for _, m := range perlModules {
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
		got := run(t, "zcat", filepath.Join(root, "usr/share/doc/actd/perl.md.gz"))
		if want := readDoc(t, "../docs/perl.md"); got != want {
			t.Errorf("usr/share/doc/actd/perl.md.gz: got %d bytes, want docs/perl.md (%d bytes)", len(got), len(want))
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
