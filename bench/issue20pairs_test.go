package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPairMeasure loads a real default pool and a real exclusive pool
// (actd, two children each) together with a wrk each for a second, the
// peer first: each gets its requests and its own server CPU. With the
// peer stopped, the round fails and is counted, and nothing is recorded.
func TestPairMeasure(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skipf("no wrk to load the servers: %v", err)
	}
	tl := testActd(t)
	w, err := newWrkRunner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := loadByName("close-8")
	procs := map[string]*cpuServer{}
	for _, name := range []string{"actd-filter-http", "actd-exclusive"} {
		p, err := startFor(tl, name, l, 2)
		if err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		defer p.stop()
		procs[name] = p
	}
	o := options{warmup: time.Second, duration: time.Second}
	p := pairCell{target: ratioTarget{"actd-filter-http", "actd-exclusive", "close-8", defaultVsExclusive}}
	p.measure(context.Background(), o, w, l, procs, 1)
	if len(p.runs) != 1 || p.failed != 0 {
		t.Fatalf("got %d runs, %d failed (%v), want 1 run", len(p.runs), p.failed, p.err)
	}
	for k, m := range p.runs[0] {
		us, known := m.serverPerRequest()
		t.Logf("server %d: %.0f requests/s, %.1f µs/request (read: %v)", k, m.wrk.rate(), us, known)
		if m.wrk.requests == 0 || m.wrk.errors != 0 {
			t.Errorf("server %d: got %d requests, %d errors, want some, none", k, m.wrk.requests, m.wrk.errors)
		}
		if !known || us <= 0 {
			t.Errorf("server %d: got server CPU %.1f µs/request (read: %v), want some", k, us, known)
		}
	}
	procs["actd-exclusive"].stop()
	p.measure(context.Background(), o, w, l, procs, 2)
	if len(p.runs) != 1 || p.failed != 1 || p.err == nil || !strings.Contains(p.err.Error(), "actd-exclusive") {
		t.Errorf("peer stopped: got %d runs, %d failed (%v), want 1 run, 1 failed naming actd-exclusive", len(p.runs), p.failed, p.err)
	}
}
