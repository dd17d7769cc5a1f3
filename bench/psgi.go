package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// psgiApp is the PSGI application both Perl servers run: the same body
// shape as actd's built-in handler and gunicorn's app, after BENCH_DELAY
// seconds.
const psgiApp = `my $delay = $ENV{BENCH_DELAY} || 0;
sub {
    select(undef, undef, undef, $delay) if $delay;
    my $body = "slot=0 pid=$$\n";
    return [ 200, [ 'Content-Type' => 'text/plain', 'Content-Length' => length $body ], [$body] ];
};
`

// psgiServers are the servers that run psgiApp.
var psgiServers = []string{"actd-psgi-dispatch", "actd-psgi-exclusive", "starman"}

// psgiCommand returns the command for one of psgiServers: actd running
// `plackup -s Actd` (perl/lib of this checkout) with the pool of the actd
// rows, or Debian's Starman with the fixed pool of the other peers. Both
// run plackup's deployment environment (no Lint, StackTrace or access log)
// and keep-alive on with a 1 s timeout (Starman's defaults, the handler's
// too). It returns an error if the app cannot be written or actd did not
// build.
func psgiCommand(name string, t *tools, s setup) (*exec.Cmd, error) {
	app := filepath.Join(s.dir, "hello.psgi")
	if err := os.WriteFile(app, []byte(psgiApp), 0o644); err != nil {
		return nil, fmt.Errorf("write PSGI app: %w", err)
	}
	delay := "BENCH_DELAY=" + strconv.FormatFloat(s.delay.Seconds(), 'f', -1, 64)
	if name == "starman" {
		cmd := exec.Command("/usr/bin/starman", "--workers", strconv.Itoa(s.pool.fixed),
			"--listen", addr(s.port), "-E", "deployment", app)
		cmd.Env = append(os.Environ(), delay)
		return cmd, nil
	}
	if t.actd == "" {
		return nil, fmt.Errorf("actd not built: %v", t.actdErr)
	}
	lib, err := filepath.Abs(filepath.Join("perl", "lib")) // the suite runs at the repository root
	if err != nil {
		return nil, err
	}
	args := withoutHandlerDelay(actdArgs(name[len("actd-psgi-"):], s))
	args = append(args, "--", "/usr/bin/plackup", "-s", "Actd", "-E", "deployment", app)
	cmd := exec.Command(t.actd, args...)
	cmd.Env = append(os.Environ(), delay, "PERL5LIB="+lib)
	return cmd, nil
}

// withoutHandlerDelay drops --handler-delay and its value from args: the
// delay is the application's here (BENCH_DELAY), not the built-in
// handler's.
func withoutHandlerDelay(args []string) []string {
	if i := slices.Index(args, "--handler-delay"); i >= 0 && i+1 < len(args) {
		return slices.Delete(slices.Clone(args), i, i+2)
	}
	return args
}

// writePSGITargets writes issue 14's PSGI target, each actd mode running
// the Perl handler at least as fast as Starman, for the tiny-response
// loads measured in this run.
func (r report) writePSGITargets(b *strings.Builder) {
	for _, server := range psgiServers[:2] {
		for _, name := range []string{"close-1", "close-8", "close-64", "keepalive-8"} {
			if slices.Contains(r.opts.loads, name) {
				r.peerRatioRow(b, server, "starman", name, 1.0)
			}
		}
	}
}

// peerRatioRow writes server's median rate over peer's for a load, or "not
// measured" when either has none.
func (r report) peerRatioRow(b *strings.Builder, server, peer, loadName string, want float64) {
	target := fmt.Sprintf("%s ≥ %.2f× %s, %s", server, want, peer, loadName)
	got, base := r.medianRate(server, loadName), r.medianRate(peer, loadName)
	if got == 0 || base == 0 {
		fmt.Fprintf(b, "| %s | not measured | – |\n", target)
		return
	}
	ratio := got / base
	fmt.Fprintf(b, "| %s | %.2f× (%.0f vs %.0f req/s) | %s |\n", target, ratio, got, base, yesNo(ratio >= want))
}
