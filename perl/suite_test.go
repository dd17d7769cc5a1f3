package perl_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// suiteBound bounds one run of Plack's server test suite (about a second).
const suiteBound = 2 * time.Minute

// TestPlackSuite runs Plack's own server test suite (Plack::Test::Suite,
// t/suite.t) against the handler under a real actd, in dispatch and
// exclusive mode, and in dispatch mode under --accept-filter http (the
// children then accept and screen each connection, and serve those the
// master held and hands over: a keep-alive one given back). Every one of its tests applies to a prefork server and must pass;
// none may skip. (One check of the suite runs inside the server only when
// the server is the test process itself: "call close after read
// IO::Handle-like" also calls ::ok in the server, which an actd child,
// another program, does not have; the test's request-side checks run.)
func TestPlackSuite(t *testing.T) {
	needPlack(t)
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"dispatch", []string{"ACTD_TEST_MODE=dispatch"}},
		{"exclusive", []string{"ACTD_TEST_MODE=exclusive"}},
		{"dispatch, accept filter http", []string{"ACTD_TEST_MODE=dispatch", "ACTD_TEST_FILTER=http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), suiteBound)
			defer cancel()
			cmd := exec.CommandContext(ctx, "perl", "t/suite.t")
			cmd.Env = append(append(os.Environ(), "ACTD="+actd), tc.env...)
			out, err := cmd.CombinedOutput()
			tap := string(out)
			if err != nil {
				t.Fatalf("perl t/suite.t: %v, want exit status 0\n%s", err, tap)
			}
			plan := regexp.MustCompile(`(?m)^1\.\.(\d+)$`).FindStringSubmatch(tap)
			oks := regexp.MustCompile(`(?m)^ok \d+`).FindAllString(tap, -1)
			switch {
			case plan == nil:
				t.Fatalf("perl t/suite.t: got no plan line, want 1..N\n%s", tap)
			case strings.Contains(tap, "not ok"), strings.Contains(tap, "# skip"):
				t.Errorf("perl t/suite.t: got a failed or skipped test, want none\n%s", tap)
			case len(oks) == 0 || plan[1] != strconv.Itoa(len(oks)):
				t.Errorf("perl t/suite.t: got %d passed tests, want the plan's %s\n%s", len(oks), plan[1], tap)
			}
			t.Logf("%s: %d of Plack::Test::Suite's tests passed", tc.name, len(oks))
		})
	}
}
