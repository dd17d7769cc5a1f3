package perl_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestUnits runs the handler's Perl unit tests (t/*.t but suite.t, which
// TestPlackSuite runs against a real actd), each a TAP script whose
// checks use sockets and socketpairs, no actd: every one must pass, and
// none may skip.
func TestUnits(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skipf("perl needed (Debian package perl): %v", err)
	}
	scripts, err := filepath.Glob("t/*.t")
	if err != nil {
		t.Fatal(err)
	}
	for _, script := range scripts {
		if filepath.Base(script) == "suite.t" {
			continue
		}
		t.Run(filepath.Base(script), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), suiteBound)
			defer cancel()
			out, err := exec.CommandContext(ctx, "perl", "-Ilib", script).CombinedOutput()
			tap := string(out)
			plan := regexp.MustCompile(`(?m)^1\.\.(\d+)$`).FindStringSubmatch(tap)
			oks := regexp.MustCompile(`(?m)^ok \d+`).FindAllString(tap, -1)
			switch {
			case err != nil:
				t.Errorf("perl %s: %v, want exit status 0\n%s", script, err, tap)
			case plan == nil || strings.Contains(tap, "not ok") || strings.Contains(tap, "# skip"):
				t.Errorf("perl %s: got a failed or skipped test or no plan, want none\n%s", script, tap)
			case plan[1] != strconv.Itoa(len(oks)):
				t.Errorf("perl %s: got %d passed tests, want the plan's %s\n%s", script, len(oks), plan[1], tap)
			}
		})
	}
}
