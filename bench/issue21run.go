package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actd/actd/internal/slowclient"
)

// Issue 21's two cases: 64 slow clients of one kind against each server,
// and goodConc good clients beside them.
const (
	issue21Slow   = 64
	slowBodyRate  = 8 << 10                // bytes a second a slow body comes at
	slowReadRate  = 16 << 10               // bytes a second a slow reader takes
	issue21Sample = 250 * time.Millisecond // how often the server is looked at
	bodyGrace     = 20 * time.Second       // after its last byte, a slow body's answer may take this long
)

// issue21Cases are the cases, in table order.
var issue21Cases = []string{"slow-body", "slow-reader"}

// issue21Result is one server under one case.
type issue21Result struct {
	server, kase string
	unloaded     []float64 // good requests' latencies alone, ms
	loaded       []float64 // beside the slow clients, ms
	failed       int       // good requests not answered within goodTimeout
	slowOK       int       // slow bodies echoed exactly, or slow readers served at their pace (readerPace), every byte right
	slowBytes    int64     // bytes the slow clients sent (bodies) or read (readers)
	samples      []poolSample
	rssBefore    uint64        // master RSS before the slow clients came
	masterCPU    time.Duration // master CPU from the slow clients' start to the window's end
	span         time.Duration // that time
	err          error
}

// runIssue21 measures every server of the comparison under each case, one
// after the other, and writes its section into o.out (or prints it).
func runIssue21(ctx context.Context, o options, t *tools, root string) error {
	started, startLoad := time.Now(), loadAverage()
	timing := issue21Full
	if o.quick {
		timing = issue21Quick
	}
	fmt.Fprintf(os.Stderr, "issue 21 (%d slow clients, %d good clients, %v window):\n", issue21Slow, goodConc, timing.window)
	var results []issue21Result
	for _, kase := range issue21Cases {
		for _, name := range issue21Servers {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w", ctx.Err())
			}
			r := measureIssue21(ctx, t, name, kase, timing)
			results = append(results, r)
			fmt.Fprintln(os.Stderr, "  "+r.summary())
		}
	}
	rep := issue21Report{results: results, timing: timing, facts: machineFacts(root, ""), elapsed: time.Since(started), load: [2]string{startLoad, loadAverage()}}
	return rep.write(o.out)
}

// measureIssue21 runs one case against one server.
func measureIssue21(ctx context.Context, t *tools, name, kase string, timing issue21Timing) issue21Result {
	r := issue21Result{server: name, kase: kase}
	s, err := newSetup(t, name, fastPoolOf(issue21Procs), 0)
	if err != nil {
		r.err = err
		return r
	}
	p, err := startServer(name, t, s)
	if err != nil {
		r.err = err
		return r
	}
	defer p.stop()
	r.unloaded, _ = goodClients(ctx, p, timing.unloaded)
	probe := poolProbe(t, p, s)
	r.rssBefore = probe().rss
	cpu, start := readSched(p.pid()).cpu, time.Now()
	slow := r.startSlow(addr(p.port), timing)
	time.Sleep(timing.ramp) // the slow clients take what they take
	stop := make(chan struct{})
	sampled := make(chan []poolSample)
	go func() { sampled <- sampleUntil(probe, stop) }()
	r.loaded, r.failed = goodClients(ctx, p, timing.window)
	close(stop)
	r.samples = <-sampled
	r.masterCPU, r.span = readSched(p.pid()).cpu-cpu, time.Since(start)
	slow.Wait()
	return r
}

// startSlow starts the case's issue21Slow slow clients against address:
// slow bodies of timing.body bytes, or slow readers (half of the
// generated response, half of the file) until the window ends. Their
// outcome goes into r once the returned group is done.
func (r *issue21Result) startSlow(address string, timing issue21Timing) *sync.WaitGroup {
	var wg sync.WaitGroup
	var ok, moved atomic.Int64
	end := time.Now().Add(timing.ramp + timing.window)
	for i := range issue21Slow {
		wg.Go(func() {
			if r.kase == "slow-body" {
				body := make([]byte, timing.body)
				for j := range body {
					body[j] = byte(i + j*7)
				}
				if slowclient.Post(address, "/echo", body, slowBodyRate, end.Add(bodyGrace)) == nil {
					ok.Add(1)
					moved.Add(int64(len(body)))
				}
				return
			}
			n, err := slowclient.Read(address, [2]string{"/bytes", "/file"}[i%2], &patternCheck{}, slowReadRate, end)
			moved.Add(n)
			if err == nil && n >= readerPace(timing) {
				ok.Add(1)
			}
		})
	}
	done := &sync.WaitGroup{}
	done.Go(func() { wg.Wait(); r.slowOK, r.slowBytes = int(ok.Load()), moved.Load() })
	return done
}

// readerPace is what a slow reader served at its pace reads at least:
// half of what its rate allows over the ramp and the window.
func readerPace(timing issue21Timing) int64 {
	return int64(slowReadRate * (timing.ramp + timing.window).Seconds() / 2)
}

// sampleUntil looks at the server every issue21Sample until stop closes,
// and returns what it saw.
func sampleUntil(probe func() poolSample, stop <-chan struct{}) []poolSample {
	var out []poolSample
	tick := time.NewTicker(issue21Sample)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-tick.C:
			out = append(out, probe())
		}
	}
}

// loadAverage returns the first line of /proc/loadavg: the machine's load
// when the run ended.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return firstLineOf(string(b))
}
