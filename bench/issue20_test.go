package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIssue20Options(t *testing.T) {
	all := append(slices.Clone(issue20Go), issue20WSGI...)
	tests := []struct {
		name        string
		args        []string
		wantServers []string
		wantLoads   []string
		wantPool    int
		wantRuns    int
		wantOut     string
		wantTime    time.Duration
	}{
		{"alone", []string{"-issue20"}, all, issue20Loads, issue20Pool, 3, "docs/benchmarks.md", 2 * time.Second},
		{"quick", []string{"-issue20", "-quick"}, all, issue20Loads, issue20Pool, 1, "", time.Second},
		{"flags given win", []string{"-issue20", "-loads", "close-8", "-pool", "8", "-servers", "actd-filter-http,actd-filter-http-master", "-duration", "5s"},
			[]string{"actd-filter-http", "actd-filter-http-master"}, []string{"close-8"}, 8, 3, "docs/benchmarks.md", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseOptions(tt.args)
			if err != nil {
				t.Fatalf("parseOptions: %v", err)
			}
			if !o.issue20 || !slices.Equal(o.servers, tt.wantServers) || !slices.Equal(o.loads, tt.wantLoads) || o.pool != tt.wantPool ||
				o.runs != tt.wantRuns || o.out != tt.wantOut || o.duration != tt.wantTime {
				t.Errorf("got issue20 %v servers %v loads %v pool %d runs %d out %q duration %v, want true %v %v %d %d %q %v",
					o.issue20, o.servers, o.loads, o.pool, o.runs, o.out, o.duration, tt.wantServers, tt.wantLoads, tt.wantPool, tt.wantRuns, tt.wantOut, tt.wantTime)
			}
			if o.idle != 0 || len(o.slow) != 0 || len(o.ramp) != 0 || o.plot != "" {
				t.Errorf("got idle %v slow %v ramp %v plot %q, want none of them", o.idle, o.slow, o.ramp, o.plot)
			}
		})
	}
	o, err := parseOptions(nil)
	if err != nil || o.issue20 || o.pool != 8 || !slices.Contains(o.servers, "actd-filter-http-master") || !slices.Contains(o.servers, "wsgi-actd-filter-http") {
		t.Errorf("defaults: got issue20 %v pool %d servers %v (%v), want a full run of pool 8 with issue 20's servers", o.issue20, o.pool, o.servers, err)
	}
	if _, err := parseOptions([]string{"-pool", "0"}); err == nil {
		t.Errorf("-pool 0: got no error, want one")
	}
}

func TestPoolFor(t *testing.T) {
	tests := []struct {
		load string
		size int
		want pool
	}{
		{"close-8", 4, pool{start: 4, minSpare: 2, maxSpare: 4, max: 4, fixed: 4}},
		{"close-64", 8, fastPool},
		{"keepalive-8", 4, fastPool}, // one process per kept-alive connection
		{"keepalive-8", 16, fastPoolOf(16)},
		{"close-1", 1, pool{start: 1, minSpare: 1, maxSpare: 1, max: 1, fixed: 1}},
		{"slow-64", 4, slowPool},
	}
	for _, tt := range tests {
		l, _ := loadByName(tt.load)
		if got := poolFor(l, tt.size); got != tt.want {
			t.Errorf("poolFor(%s, %d): got %+v, want %+v", tt.load, tt.size, got, tt.want)
		}
	}
}

func TestHeldFrom(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    uint64
		wantErr bool
	}{
		{"held", `{"version":"x","pool":{"stats":{"served":9,"held":1234,"handoffs":1200}}}`, 1234, false},
		{"none held yet (omitted)", `{"pool":{"stats":{"served":9}}}`, 0, false},
		{"not JSON", `actd status: no such socket`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := heldFrom([]byte(tt.doc))
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCountHeld(t *testing.T) {
	counts := []uint64{100, 160}
	p := &serverProc{held: func() (uint64, error) {
		n := counts[0]
		counts = counts[1:]
		return n, nil
	}}
	m, err := p.countHeld(func() (runMeasure, error) { return runMeasure{conns: 80}, nil })
	if share, ok := m.heldShare(); err != nil || !ok || m.held != 60 || share != 0.75 {
		t.Errorf("got held %d share %v (%v), error %v; want 60, 0.75", m.held, share, ok, err)
	}
	p.held = func() (uint64, error) { return 0, errors.New("no control socket") }
	m, err = p.countHeld(func() (runMeasure, error) { return runMeasure{conns: 80}, nil })
	if _, ok := m.heldShare(); err != nil || ok {
		t.Errorf("status failing: got counted %v, error %v; want not counted, no error", ok, err)
	}
}

// issue20Cells builds one cell per server and load with the given
// requests/s, master CPU per connection (µs), share held and server CPU
// per request (µs, read in a v1 group; none where not given), over 3 runs
// of a second each.
func issue20Cells(rates, cpu, held, serverUS map[string]float64) []cell {
	var cells []cell
	for _, name := range issue20Loads {
		l, _ := loadByName(name)
		for server, rate := range rates {
			c := cell{server: server, load: l, cpu: cpuSource{server: server, how: (&cpuGroup{}).how()}}
			for range 3 {
				conns := uint64(rate)
				m := runMeasure{wrk: wrkResult{requests: int(rate), elapsed: time.Second}, conns: conns,
					masterCPU: time.Duration(cpu[server]*float64(conns)) * time.Microsecond}
				if l.keepAlive {
					m.conns = 0
					m.masterCPU = time.Duration(cpu[server]*rate) * time.Microsecond
				}
				if us, ok := serverUS[server]; ok {
					m.serverCPU, m.serverKnown = time.Duration(us*rate)*time.Microsecond, true
				}
				if share, ok := held[server]; ok {
					m.held, m.heldKnown = uint64(share*float64(m.conns)), true
				}
				c.runs = append(c.runs, m)
			}
			cells = append(cells, c)
		}
	}
	return cells
}

func TestIssue20Targets(t *testing.T) {
	rates := map[string]float64{
		"actd-exclusive": 30000, "actd-dispatch": 25000, "actd-filter-http": 29000, "actd-filter-http-master": 24000,
		"wsgi-actd-exclusive": 25000, "wsgi-actd-dispatch": 23000, "wsgi-actd-filter-http": 14000, "gunicorn": 13000, "uwsgi": 35000,
	}
	cpu := map[string]float64{"actd-exclusive": 2, "actd-filter-http": 3, "actd-filter-http-master": 50, "wsgi-actd-filter-http": 48}
	held := map[string]float64{"actd-filter-http": 0, "actd-filter-http-master": 1, "wsgi-actd-filter-http": 1}
	pairs := []pairCell{
		// close-8: 0.97, 0.90 and 1.03 by rounds; µs 0.96, 1.00, 1.02
		testPair(ratioTarget{"actd-filter-http", "actd-exclusive", "close-8", defaultVsExclusive},
			[][2]float64{{29000, 30000}, {27000, 30000}, {31000, 30000}}, [][2]float64{{48, 50}, {50, 50}, {51, 50}}),
		// close-1: every round below, the CPU not read in one
		testPair(ratioTarget{"actd-filter-http", "actd-exclusive", "close-1", defaultVsExclusive},
			[][2]float64{{4000, 4800}, {4100, 4700}}, [][2]float64{{60, 55}, {0, 55}}),
		testPair(ratioTarget{"wsgi-actd-filter-http", "gunicorn", "close-8", wsgiVsGunicorn},
			[][2]float64{{20000, 12000}, {21000, 11000}, {19000, 11000}}, nil),
		testPair(ratioTarget{"wsgi-actd-filter-http", "uwsgi", "close-8", wsgiVsUwsgi}, [][2]float64{{10500, 10000}}, [][2]float64{{100, 120}}),
	}
	r := report{opts: options{loads: issue20Loads, runs: 3, pool: 4}, cells: issue20Cells(rates, cpu, held, nil), pairs: pairs}
	var b strings.Builder
	r.writeIssue20Targets(&b)
	got := b.String()
	for _, want := range []string{
		"| target | requests/s alone (judged) | requests/s together | rounds together at target | server µs/request together | met |",
		"| actd-filter-http ≥ 0.95× actd-exclusive, close-8 | 0.97× (29000 vs 30000) | 0.97× (pairs 0.90–1.03) | 2 of 3 | 1.00× (pairs 0.96–1.02) | yes |",
		"| actd-filter-http ≥ 0.95× actd-exclusive, close-1 | 0.97× (29000 vs 30000) | 0.85× (pairs 0.83–0.87) | 0 of 2 | 1.09× | yes |",
		"| actd-filter-http ≥ 0.95× actd-exclusive, keepalive-8 | 0.97× (29000 vs 30000) | not measured | – | – | yes |",
		"| wsgi-actd-filter-http ≥ 0.95× wsgi-actd-exclusive, keepalive-8 | 0.56× (14000 vs 25000) | not measured | – | – | **no** |",
		"| wsgi-actd-filter-http ≥ 1.80× gunicorn, close-8 | 1.08× (14000 vs 13000) | 1.73× (pairs 1.67–1.91) | 1 of 3 | – | **no** |",
		"| wsgi-actd-filter-http ≥ 1.00× uwsgi, close-8 | 0.40× (14000 vs 35000) | 1.05× | 1 of 1 | 0.83× | **no** |",
		"| actd-filter-http master CPU ≤ 5 µs per connection, close-64 | 3.0 µs (held by the master: 0.0%) | yes |",
		"| wsgi-actd-filter-http master CPU ≤ 5 µs per connection, close-1 | 48.0 µs (held by the master: 100.0%) | **no** |",
		"Met: judged by requests/s alone",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("got\n%s\nwant a row %q", got, want)
		}
	}
	if strings.Contains(got, "per connection, keepalive-8") {
		t.Errorf("got a master CPU target for keep-alive, want it for one request per connection only:\n%s", got)
	}
	var none strings.Builder
	report{opts: options{loads: issue20Loads}}.writeIssue20Targets(&none)
	if n := strings.Count(none.String(), "| not measured | not measured | – | – | – |"); n != 10 {
		t.Errorf("nothing measured: got %d ratio rows not measured, want 10:\n%s", n, none.String())
	}
	if n := strings.Count(none.String(), "| not measured | – |\n"); n != 6 {
		t.Errorf("nothing measured: got %d master CPU rows not measured, want 6:\n%s", n, none.String())
	}
}

// testPair builds target's pair loaded together from each round's
// requests/s and server µs per request ([0] the server's, [1] the
// peer's; 0 µs or no us: not read), over runs of a second.
func testPair(target ratioTarget, rates, us [][2]float64) pairCell {
	p := pairCell{target: target}
	for i, round := range rates {
		var runs [2]runMeasure
		for k, rate := range round {
			runs[k].wrk = wrkResult{requests: int(rate), elapsed: time.Second}
			if i < len(us) && us[i][k] > 0 {
				runs[k].serverCPU, runs[k].serverKnown = time.Duration(us[i][k]*rate)*time.Microsecond, true
			}
		}
		p.runs = append(p.runs, runs)
	}
	return p
}

func TestPairsFor(t *testing.T) {
	all := append(slices.Clone(issue20Go), issue20WSGI...)
	tests := []struct {
		name    string
		servers []string
		load    string
		want    []string // the targets, as String gives them
	}{
		{"close-8, every server", all, "close-8", []string{
			"actd-filter-http ≥ 0.95× actd-exclusive, close-8", "wsgi-actd-filter-http ≥ 0.95× wsgi-actd-exclusive, close-8",
			"wsgi-actd-filter-http ≥ 1.80× gunicorn, close-8", "wsgi-actd-filter-http ≥ 1.00× uwsgi, close-8"}},
		{"keepalive-8, every server", all, "keepalive-8", []string{
			"actd-filter-http ≥ 0.95× actd-exclusive, keepalive-8", "wsgi-actd-filter-http ≥ 0.95× wsgi-actd-exclusive, keepalive-8"}},
		{"a peer not run", []string{"actd-filter-http", "wsgi-actd-filter-http", "uwsgi"}, "close-8", []string{"wsgi-actd-filter-http ≥ 1.00× uwsgi, close-8"}},
		{"not one of issue 20's loads", all, "slow-64", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := loadByName(tt.load)
			var got []string
			for _, p := range pairsFor(tt.servers, l) {
				got = append(got, p.target.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPairRuns(t *testing.T) {
	tests := []struct {
		args           []string
		runs, pairRuns int
	}{
		{nil, 3, 3},
		{[]string{"-runs", "5"}, 5, 5},
		{[]string{"-pair-runs", "0"}, 3, 0},
		{[]string{"-quick"}, 1, 1},
		{[]string{"-quick", "-pair-runs", "0"}, 1, 0},
		{[]string{"-issue20"}, 3, 7},
		{[]string{"-issue20", "-quick"}, 1, 1},
		{[]string{"-issue20", "-runs", "2", "-pair-runs", "4"}, 2, 4},
		{[]string{"-issue25"}, 3, 3}, // no pair among its servers: none is loaded
	}
	for _, tt := range tests {
		o, err := parseOptions(tt.args)
		if err != nil || o.runs != tt.runs || o.pairRuns != tt.pairRuns {
			t.Errorf("%v: got runs %d, pair runs %d (%v), want %d, %d", tt.args, o.runs, o.pairRuns, err, tt.runs, tt.pairRuns)
		}
	}
}

func TestIssue20Markdown(t *testing.T) {
	rates := map[string]float64{"actd-exclusive": 30000, "actd-filter-http": 28500, "actd-filter-http-master": 24000}
	held := map[string]float64{"actd-filter-http": 0.02, "actd-filter-http-master": 1}
	serverUS := map[string]float64{"actd-exclusive": 60, "actd-filter-http": 57}
	pair := testPair(ratioTarget{"actd-filter-http", "actd-exclusive", "close-8", defaultVsExclusive},
		[][2]float64{{29000, 30000}, {27000, 30000}, {31000, 30000}}, [][2]float64{{48, 50}, {50, 50}, {51, 50}})
	pair.failed, pair.err = 1, errors.New("wrk: exit status 1\nmore")
	o := options{loads: issue20Loads, runs: 3, pairRuns: 7, pool: 4, warmup: time.Second, duration: 2 * time.Second}
	r := report{opts: o, cells: issue20Cells(rates, map[string]float64{}, held, serverUS), pairs: []pairCell{pair}}
	if !r.measuredIssue20() {
		t.Fatalf("measuredIssue20: got false with actd-filter-http-master measured, want true")
	}
	text := r.issue20Markdown()
	for _, want := range []string{
		issue20Begin, issue20End,
		"| close-8 | 30000 | – | 28500 | 24000 | 0.95× | 0.80× |",
		"| close-64 | 0.0 | – | 0.0 | 0.0 | 2.0% | 100.0% |",
		"| keepalive-8 | 0.0 | – | 0.0 | 0.0 | – | – |",
		"| load | exclusive: server µs | dispatch: server µs | default: server µs | master-first: server µs | default / exclusive | master-first / exclusive |",
		"| close-1 | 60.0 | – | 57.0 | – | 0.95× | – |",
		"Read before and after each run from each server's own cgroup, cgroup v1 `cpuacct.usage`, in ns, which every process it starts joins.",
		"(this one: 3 interleaved rounds of 1s warm-up and a 2s run per server; 7 rounds of each target pair's two servers loaded at once, 1s of warm-up and a 2s run, the first 3 of them after that round's runs alone; 4 processes per server,",
		"| server / peer | load | requests/s together | requests/s ratio | server µs/request together | µs/request ratio |",
		"| actd-filter-http / actd-exclusive | close-8 | 29000 (27000–31000) / 30000 | 0.97× (pairs 0.90–1.03) | 50.0 (48.0–51.0) / 50.0 | 1.00× (pairs 0.96–1.02) |",
		"actd-filter-http ≥ 0.95× actd-exclusive, close-8: 1 of 4 rounds together failed, the last: wrk: exit status 1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("got\n%s\nwant it to contain %q", text, want)
		}
	}
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	doc := "# b\n\n" + beginMarker + "\nresults\n" + endMarker + "\n\n## Issue 20\n\n" + issue20Begin + "\nold\n" + issue20End + "\n\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replaceSection(path, section{issue20Begin, issue20End, text}); err != nil {
		t.Fatalf("replaceSection: %v", err)
	}
	got, _ := os.ReadFile(path)
	want := "# b\n\n" + beginMarker + "\nresults\n" + endMarker + "\n\n## Issue 20\n\n" + text + "\nafter\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r.opts.loads = []string{"close-8"}
	if only := r.issue20Markdown(); strings.Contains(only, "| close-64 |") || !strings.Contains(only, "| close-8 |") {
		t.Errorf("-loads close-8: got\n%s\nwant rows for close-8 only", only)
	}
	if (report{cells: []cell{{server: "actd-filter-http"}}}).measuredIssue20() {
		t.Errorf("measuredIssue20: got true without issue 20's own servers, want false")
	}
}

// TestIssue20Doc keeps docs/benchmarks.md true to the suite: the issue 20
// section's markers are there once each, in order, so -issue20 rewrites it
// in place; the commands it shows parse; it gives the pair rounds that
// -issue20 runs; every server it names is one the suite knows.
func TestIssue20Doc(t *testing.T) {
	doc := issueDoc(t, "20", issue20Begin, issue20End, "-issue20", "-issue20 -quick -out=", "-issue20 -runs 5 -loads close-8,close-64", "-issue20 -pair-runs 11")
	if want := "run, in " + issue20Flags["pair-runs"] + " rounds (`-pair-runs`"; !strings.Contains(doc, want) {
		t.Errorf("docs/benchmarks.md: got no %q, want the pair rounds -issue20 runs", want)
	}
	for _, server := range append(slices.Clone(issue20Go), issue20WSGI...) {
		if !strings.Contains(doc, "`"+server+"`") {
			t.Errorf("docs/benchmarks.md: got no `%s`, want every server of -issue20 named", server)
		}
		if !slices.Contains(allServers, server) {
			t.Errorf("got %s in -issue20, want it among allServers", server)
		}
	}
}

func TestPairRounds(t *testing.T) {
	pair := []pairCell{{target: issue20RatioTargets()[0]}}
	tests := []struct {
		runs, pairRuns int
		pairs          []pairCell
		want           string
	}{
		{3, 7, pair, "7 rounds of each target pair's two servers loaded at once, 1s of warm-up and a 2s run, the first 3 of them after that round's runs alone; "},
		{1, 1, pair, "1 round of each target pair's two servers loaded at once, 1s of warm-up and a 2s run, each after that round's runs alone; "},
		{5, 3, pair, "3 rounds of each target pair's two servers loaded at once, 1s of warm-up and a 2s run, each after that round's runs alone; "},
		{3, 0, nil, ""},
		{3, 3, nil, ""}, // no pair among the servers run
	}
	for _, tt := range tests {
		r := report{opts: options{runs: tt.runs, pairRuns: tt.pairRuns, warmup: time.Second, duration: 2 * time.Second}, pairs: tt.pairs}
		if got := r.pairRounds(); got != tt.want {
			t.Errorf("runs %d, pair runs %d: got %q, want %q", tt.runs, tt.pairRuns, got, tt.want)
		}
	}
}

func TestPairsInTargetOrder(t *testing.T) {
	targets := issue20RatioTargets()
	r := report{pairs: []pairCell{{target: targets[9]}, {target: targets[0]}, {target: targets[4]}, {target: targets[1]}}}
	var got []ratioTarget
	for _, p := range r.pairsInTargetOrder() {
		got = append(got, p.target)
	}
	if want := []ratioTarget{targets[0], targets[1], targets[4], targets[9]}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
