package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSplitBuild(t *testing.T) {
	tests := []struct {
		name       string
		wantBase   string
		wantBefore bool
	}{
		{"actd-dispatch", "actd-dispatch", false},
		{"actd-exclusive@before", "actd-exclusive", true},
		{"baseline", "baseline", false},
		{"@before", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, before := splitBuild(tt.name)
			if base != tt.wantBase || before != tt.wantBefore {
				t.Errorf("got %q, %v, want %q, %v", base, before, tt.wantBase, tt.wantBefore)
			}
		})
	}
}

func TestAddBefore(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"twins follow their server", []string{"actd-dispatch", "baseline", "actd-exclusive"},
			[]string{"actd-dispatch", "actd-dispatch@before", "baseline", "actd-exclusive", "actd-exclusive@before"}},
		{"a listed twin is not doubled", []string{"actd-exclusive@before", "actd-exclusive"},
			[]string{"actd-exclusive@before", "actd-exclusive"}},
		{"no actd, no twins", []string{"baseline", "apache-prefork"}, []string{"baseline", "apache-prefork"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addBefore(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseOptionsBefore(t *testing.T) {
	abs, err := filepath.Abs("before")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		args        []string
		wantServers []string
		wantOut     string
		wantPlot    string
		wantBefore  string
		wantErr     bool
	}{
		{name: "plain run keeps the docs outputs", args: []string{"-servers", "actd-dispatch"},
			wantServers: []string{"actd-dispatch"}, wantOut: "docs/benchmarks.md", wantPlot: "docs/scaling.png"},
		{name: "@before needs -actd-before", args: []string{"-servers", "actd-dispatch@before"}, wantErr: true},
		{name: "A/B run adds twins and writes no docs", args: []string{"-actd-before", "before", "-servers", "actd-dispatch,baseline"},
			wantServers: []string{"actd-dispatch", "actd-dispatch@before", "baseline"}, wantBefore: abs},
		{name: "A/B run writes where asked", args: []string{"-actd-before", "before", "-servers", "actd-exclusive", "-out", "/tmp/ab.md", "-plot", "/tmp/ab.png"},
			wantServers: []string{"actd-exclusive", "actd-exclusive@before"}, wantOut: "/tmp/ab.md", wantPlot: "/tmp/ab.png", wantBefore: abs},
		{name: "only a twin", args: []string{"-actd-before", "before", "-servers", "actd-exclusive@before"},
			wantServers: []string{"actd-exclusive@before"}, wantBefore: abs},
		{name: "no twin for the baseline", args: []string{"-actd-before", "before", "-servers", "baseline@before"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseOptions(tt.args)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got no error, want one (servers %v)", o.servers)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseOptions: %v", err)
			}
			if !slices.Equal(o.servers, tt.wantServers) || o.out != tt.wantOut || o.plot != tt.wantPlot || o.actdBefore != tt.wantBefore {
				t.Errorf("got servers %v out %q plot %q before %q, want %v %q %q %q",
					o.servers, o.out, o.plot, o.actdBefore, tt.wantServers, tt.wantOut, tt.wantPlot, tt.wantBefore)
			}
		})
	}
}

func TestWriteAB(t *testing.T) {
	l, _ := loadByName("close-8")
	run := func(requests int, p99 time.Duration) runMeasure {
		return runMeasure{wrk: wrkResult{requests: requests, elapsed: time.Second, p99: p99}}
	}
	r := report{
		opts:  options{actdBefore: "/b", loads: []string{"close-8"}},
		facts: []fact{{"commit", "aaa"}, {"actd before", "bbb"}},
		cells: []cell{
			{server: "actd-dispatch", load: l, runs: []runMeasure{run(900, time.Millisecond), run(1100, 3*time.Millisecond), run(1000, 2*time.Millisecond)}},
			{server: "actd-dispatch@before", load: l, runs: []runMeasure{run(1000, time.Millisecond), run(1000, time.Millisecond), run(800, time.Millisecond)}},
			{server: "actd-exclusive", load: l, runs: []runMeasure{run(1000, time.Millisecond)}},
		},
		idle: []idleMeasure{
			{server: "actd-dispatch", window: 10 * time.Second, master: schedStat{runs: 20, threads: 4}},
			{server: "actd-dispatch@before", window: 10 * time.Second, master: schedStat{runs: 70, threads: 6}},
		},
	}
	var b strings.Builder
	r.writeAB(&b)
	got := b.String()
	for _, want := range []string{
		"(aaa); before: the actd built from `-actd-before` (bbb)",
		"| close-8 | actd-dispatch | 1000 | 1000 | 1.00 | 0.90–1.25 | 1.00 | 2.00 |",
		"| actd-dispatch | 7.0 | 2.0 | 6 | 4 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "actd-exclusive") {
		t.Errorf("got %q, want no row for actd-exclusive (it has no twin)", got)
	}
	var none strings.Builder
	report{opts: options{loads: []string{"close-8"}}, cells: r.cells}.writeAB(&none)
	if none.Len() != 0 {
		t.Errorf("got %q without -actd-before, want nothing", none.String())
	}
}
