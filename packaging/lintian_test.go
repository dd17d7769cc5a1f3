package packaging

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLintian wants no error and no warning, pedantic and experimental tags
// included; what is left (info tags, the override) is explained in README.md.
func TestLintian(t *testing.T) {
	needTool(t, "lintian", "lintian")
	deb := buildDeb(t, "")
	out, err := exec.Command("lintian", "--display-info", "--display-experimental", "--pedantic",
		"--fail-on", "error,warning", deb).CombinedOutput()
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
