package packaging

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLintian wants no error and no warning on any of the packages,
// pedantic and experimental tags included; what is left (info tags, the
// override) is explained in README.md. One lintian run checks all three.
func TestLintian(t *testing.T) {
	needTool(t, "lintian", "lintian")
	var debs []string
	for _, p := range debPackages {
		debs = append(debs, buildPackage(t, "", p.name))
	}
	args := append([]string{"--display-info", "--display-experimental", "--pedantic",
		"--fail-on", "error,warning"}, debs...)
	out, err := exec.Command("lintian", args...).CombinedOutput()
	if err != nil {
		t.Errorf("lintian: %v (2: it found errors or warnings; 1: it failed)", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch {
		case strings.HasPrefix(line, "E: "), strings.HasPrefix(line, "W: "):
			t.Errorf("lintian: %s", line)
		case line != "":
			t.Logf("lintian: %s", line)
		}
	}
}
