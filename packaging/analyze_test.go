package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// unitDir is where systemd-analyze --root=ROOT finds the units.
const unitDir = "usr/lib/systemd/system"

// needTool skips the test when name is not on PATH; pkg is the Debian
// package that provides it.
func needTool(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not found (apt-get install %s): %v", name, pkg, err)
	}
}

// analyzeRoot builds a file system root for systemd-analyze --root: the
// host's targets, the four shipped units, a placeholder /usr/bin/actd and
// /bin/kill (verify checks that ExecStart= and ExecReload= are executable),
// and the drop-in that gives actd@test.socket its address.
func analyzeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mustMkdir(t, filepath.Join(root, unitDir))
	mustMkdir(t, filepath.Join(root, "usr/bin"))
	mustMkdir(t, filepath.Join(root, "etc/systemd/system/actd@test.socket.d"))
	if err := os.Symlink("usr/bin", filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	targets, _ := filepath.Glob("/usr/lib/systemd/system/*.target")
	if len(targets) == 0 {
		t.Skip("no systemd targets in /usr/lib/systemd/system (apt-get install systemd)")
	}
	for _, src := range targets {
		copyFile(t, src, filepath.Join(root, unitDir, filepath.Base(src)), 0o644)
	}
	for _, u := range []string{"actd.socket", "actd.service", "actd@.socket", "actd@.service"} {
		copyFile(t, filepath.Join("systemd", u), filepath.Join(root, unitDir, u), 0o644)
	}
	for _, exe := range []string{"usr/bin/actd", "usr/bin/kill"} {
		writeFile(t, filepath.Join(root, exe), "#!/bin/sh\nexit 0\n", 0o755)
	}
	writeFile(t, filepath.Join(root, "etc/systemd/system/actd@test.socket.d/listen.conf"),
		"[Socket]\nListenStream=127.0.0.1:8080\n", 0o644)
	return root
}

// analyze runs systemd-analyze with args and returns its stdout, its stderr
// and its error. The man page check finds actd(8) in the source tree through
// MANPATH; without man(1) the check is turned off.
func analyze(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	manDir := t.TempDir()
	mustMkdir(t, filepath.Join(manDir, "man8"))
	copyFile(t, "man/actd.8", filepath.Join(manDir, "man8", "actd.8"), 0o644)
	if _, err := exec.LookPath("man"); err != nil {
		t.Logf("man not found (apt-get install man-db): not checking Documentation=man:actd(8)")
		args = append([]string{"--man=no"}, args...)
	}
	cmd := exec.Command("systemd-analyze", args...)
	cmd.Env = append(os.Environ(), "MANPATH="+manDir, "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func TestSystemdAnalyzeVerify(t *testing.T) {
	needTool(t, "systemd-analyze", "systemd")
	units := []string{"actd.socket", "actd.service", "actd@test.socket", "actd@test.service"}
	cases := []struct {
		name  string
		spoil func(t *testing.T, root string) // nil: the units as shipped
		units []string
		clean bool
	}{
		{"shipped", nil, units, true},
		// The cases below prove the check can fail.
		{"unknown key", func(t *testing.T, root string) {
			appendFile(t, filepath.Join(root, unitDir, "actd.service"), "[Service]\nWatchdogSecs=20s\n")
		}, units, false},
		{"named pool without drop-in", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, "etc/systemd/system/actd@test.socket.d"))
		}, units, false},
		{"missing binary", func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "usr/bin/actd"))
		}, units, false},
		{"unknown man page", func(t *testing.T, root string) {
			appendFile(t, filepath.Join(root, unitDir, "actd.socket"), "[Unit]\nDocumentation=man:actd-nonesuch(8)\n")
		}, units, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath("man"); err != nil && c.name == "unknown man page" {
				t.Skipf("man not found (apt-get install man-db): %v", err)
			}
			root := analyzeRoot(t)
			if c.spoil != nil {
				c.spoil(t, root)
			}
			_, stderr, err := analyze(t, append([]string{"verify", "--root=" + root}, c.units...)...)
			clean := err == nil && stderr == ""
			if clean != c.clean {
				t.Errorf("got clean=%v (err %v, stderr %q), want clean=%v", clean, err, stderr, c.clean)
			}
		})
	}
}

// exposureLine is the last line of systemd-analyze security for one unit.
var exposureLine = regexp.MustCompile(`Overall exposure level for (\S+): ([0-9.]+)`)

// maxExposure is the highest score the services may have (0 best, 10 worst).
const maxExposure = 2.0

func TestSystemdAnalyzeSecurity(t *testing.T) {
	needTool(t, "systemd-analyze", "systemd")
	root := analyzeRoot(t)
	for _, unit := range []string{"actd.service", "actd@test.service"} {
		t.Run(unit, func(t *testing.T) {
			out, stderr, err := analyze(t, "security", "--offline=yes", "--no-pager", "--root="+root, unit)
			if err != nil {
				t.Fatalf("systemd-analyze security: %v\n%s", err, stderr)
			}
			m := exposureLine.FindStringSubmatch(out)
			if m == nil || m[1] != unit {
				t.Fatalf("got no exposure line for %s in:\n%s", unit, out)
			}
			score, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s exposure %.1f", unit, score)
			if score > maxExposure {
				t.Errorf("exposure %.1f, want <= %.1f; the ✗ lines:\n%s", score, maxExposure, failedChecks(out))
			}
		})
	}
}

// failedChecks returns the lines of a security report that lost points.
func failedChecks(report string) string {
	var b strings.Builder
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "✗") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
