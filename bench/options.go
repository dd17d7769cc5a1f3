package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// options are the suite's settings, from the command line.
type options struct {
	runs       int           // measured runs per server and load
	pairRuns   int           // rounds in which issue 20's target pairs are loaded together (issue20pairs.go)
	duration   time.Duration // length of one measured run
	warmup     time.Duration // unmeasured load before each run
	slowWarmup time.Duration // warm-up for the slow load, so scalers reach capacity
	idle       time.Duration // idle CPU window
	servers    []string      // servers to measure, by name
	loads      []string      // loads to run, by name
	ramp       []string      // servers for the scaling ramp; empty skips it
	slow       []string      // servers for the slow-clients experiment; empty skips it
	rampTiming rampTiming
	install    bool   // apt-get install missing peers
	out        string // markdown file to update; "" prints only
	plot       string // PNG file for the ramp; "" skips the plot
	keepDir    bool   // keep the work directory (configs, logs) for debugging
	actdBefore string // absolute path of a checkout whose actd runs as the @before servers; "" for none
	preload    bool   // run only the preload comparison (preload.go) and print its table
	pool       int    // processes per server for the fast loads (poolFor)
	issue20    bool   // run only issue 20's comparison (issue20.go) and write only its section
	issue21    bool   // run only issue 21's comparison (issue21.go) and write only its section
	issue24    bool   // run only issue 24's comparison (issue24.go) and write only its section
	quick      bool   // -quick: short runs, no docs written
	issue25    bool   // run only issue 25's access-log cost (issue25.go) and write only its section
}

// allServers lists every server the suite knows, in table order.
// baseline-netconn is the baseline serving through Go's net.Conn, as a
// worker.Serve worker does: it shows the cost of Go's network layer apart
// from the cost of supervision.
// actd-filter-http-master is actd-filter-http with the built-in handler
// as a revision-3 worker: the master-first path of the default pool.
// The actd-go-* servers run the baseline's answers as an actd worker
// through each path of the Go worker library (-worker), to compare them.
var allServers = []string{"actd-dispatch", "actd-exclusive", "actd-filter-http", "actd-filter-http-master", "baseline", "baseline-netconn",
	"actd-go-fd", "actd-go-conn", "actd-go-http", "apache-prefork", "gunicorn", "socket-activate"}

// The PSGI servers (psgi.go) join the list.
func init() { allServers = append(allServers, psgiServers...) }

// parseOptions reads args. It returns an error for an unknown flag, a
// non-positive count or duration, or an unknown server or load name.
func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	var servers, loadNames, rampServers, slow string
	quick := fs.Bool("quick", false, "short smoke run: 1 s runs, short ramp, writes no docs")
	fs.IntVar(&o.runs, "runs", 3, "measured runs per server and load (median and min-max reported)")
	fs.IntVar(&o.pairRuns, "pair-runs", -1, "rounds in which each of issue 20's target pairs (the default pool and exclusive mode, WSGI and gunicorn, WSGI and uWSGI) is also loaded together (0: none; negative: as many as -runs)")
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "length of one measured run")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load before each run")
	fs.DurationVar(&o.slowWarmup, "slow-warmup", 6*time.Second, "warm-up before the slow-handler runs, long enough for Apache and actd to reach 32 processes")
	fs.DurationVar(&o.idle, "idle", 10*time.Second, "idle window for the idle CPU measurement (0: skip it)")
	fs.StringVar(&servers, "servers", strings.Join(allServers, ","), "comma-separated servers to measure")
	fs.StringVar(&loadNames, "loads", strings.Join(loadNamesList(), ","), "comma-separated loads to run")
	fs.StringVar(&rampServers, "ramp", "actd-dispatch,actd-exclusive,apache-prefork", "comma-separated servers for the scaling ramp (empty: skip)")
	fs.StringVar(&slow, "slow", strings.Join(slowServers, ","), "comma-separated servers for the slow-clients experiment (empty: skip)")
	fs.BoolVar(&o.install, "install", true, "apt-get install missing peers (wrk, apache2, python3-gunicorn, systemd, gcc)")
	fs.StringVar(&o.out, "out", "docs/benchmarks.md", "markdown file whose results section is rewritten (empty: print only)")
	fs.StringVar(&o.plot, "plot", "docs/scaling.png", "PNG file for the scaling ramp (empty: no plot)")
	fs.BoolVar(&o.preload, "preload", false, "run only the preload comparison (a 50 MB Python app in a pool of 32: actd, gunicorn, uWSGI with and without preload) and print its table")
	fs.BoolVar(&o.keepDir, "keep", false, "keep the work directory with configs and server logs")
	fs.IntVar(&o.pool, "pool", fastPool.max, "processes per server for the fast loads (a keep-alive load gets at least one per connection)")
	fs.BoolVar(&o.issue21, "issue21", false, "run only issue 21's comparison (64 slow bodies, then 64 slow readers, beside 8 good clients: actd default and without holding, Apache event, gunicorn, uWSGI) and rewrite only its section of -out")
	fs.BoolVar(&o.issue24, "issue24", false, "run only issue 24's comparison (the cost of PROXY protocol and of TLS: actd built-in and WSGI beside gunicorn --certfile and uWSGI --https-socket, 8 processes, close-8 and keepalive-8) and rewrite only its section of -out")
	issue20 := fs.Bool("issue20", false, "run only issue 20's comparison (the default pool against exclusive and dispatch, Go and WSGI, pool 4) and rewrite only its section of -out")
	issue25 := fs.Bool("issue25", false, "run only issue 25's access-log cost (the default pool with and without --access-log FILE, pool 4) and rewrite only its section of -out")
	fs.StringVar(&o.actdBefore, "actd-before", "", "a checkout of another commit: its actd runs as actd-dispatch@before and actd-exclusive@before in the same rounds (writes no docs unless -out or -plot is given)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if err := o.setBefore(fs); err != nil {
		return options{}, err
	}
	if *issue20 {
		if err := setIssue20(fs); err != nil {
			return options{}, err
		}
		o.issue20 = true
	}
	if *issue25 {
		if err := setIssue25(fs); err != nil {
			return options{}, err
		}
		o.issue25 = true
	}
	o.rampTiming = defaultRampTiming
	if *quick {
		o.quick = true
		o.runs, o.duration, o.warmup, o.slowWarmup = 1, time.Second, time.Second, time.Second
		o.pairRuns = min(o.pairRuns, 1)
		o.idle = min(o.idle, 2*time.Second) // shortened, not turned on: -idle 0 and -issue20 skip it
		o.rampTiming = quickRampTiming
		o.out, o.plot = "", ""
	}
	if o.pairRuns < 0 {
		o.pairRuns = o.runs
	}
	if err := o.setLists(servers, loadNames, rampServers); err != nil {
		return o, err
	}
	var err error
	if o.slow, err = pickNames(slow, slowServers); err != nil {
		return o, fmt.Errorf("-slow: %w", err)
	}
	return o, nil
}

// setLists parses and checks the comma-separated name lists. It returns an
// error naming the first unknown name or a bad count or duration.
func (o *options) setLists(servers, loadNames, rampServers string) error {
	if o.runs < 1 || o.duration <= 0 || o.idle < 0 || o.pool < 1 {
		return fmt.Errorf("-runs, -duration and -pool must be positive, -idle not negative")
	}
	var err error
	known := knownServers(o.actdBefore != "")
	if o.servers, err = pickNames(servers, known); err != nil {
		return fmt.Errorf("-servers: %w", err)
	}
	if o.actdBefore != "" {
		o.servers = addBefore(o.servers)
	}
	if o.loads, err = pickNames(loadNames, loadNamesList()); err != nil {
		return fmt.Errorf("-loads: %w", err)
	}
	if o.ramp, err = pickNames(rampServers, known); err != nil {
		return fmt.Errorf("-ramp: %w", err)
	}
	return nil
}

// setBefore makes -actd-before absolute (the suite changes to the
// repository root) and, for an A/B run, drops the default -out and -plot so
// the published results are not replaced by a comparison run unless asked.
// It returns an error if the path cannot be made absolute.
func (o *options) setBefore(fs *flag.FlagSet) error {
	if o.actdBefore == "" {
		return nil
	}
	dir, err := filepath.Abs(o.actdBefore)
	if err != nil {
		return fmt.Errorf("-actd-before: %w", err)
	}
	o.actdBefore = dir
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["out"] {
		o.out = ""
	}
	if !set["plot"] {
		o.plot = ""
	}
	return nil
}

// pickNames splits list at commas and checks every name against known. It
// returns the names in list order, or an error naming an unknown one.
func pickNames(list string, known []string) ([]string, error) {
	var names []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("unknown name %q (known: %s)", name, strings.Join(known, ", "))
		}
		names = append(names, name)
	}
	return names, nil
}
