package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWithoutHandlerDelay(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"middle", []string{"--listen", "x", "--handler-delay", "20ms", "--control-socket", "c"}, []string{"--listen", "x", "--control-socket", "c"}},
		{"absent", []string{"--listen", "x"}, []string{"--listen", "x"}},
		{"no value", []string{"--handler-delay"}, []string{"--handler-delay"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.args)
			if got := withoutHandlerDelay(tt.args); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if !slices.Equal(tt.args, in) {
				t.Errorf("args changed to %q, want them left as %q", tt.args, in)
			}
		})
	}
}

func TestPSGITargets(t *testing.T) {
	mk := func(server, loadName string, rate float64) cell {
		l, _ := loadByName(loadName)
		return cell{server: server, load: l, runs: []runMeasure{runWithRate(rate)}}
	}
	r := report{opts: options{loads: []string{"close-8"}}, cells: []cell{
		mk("actd-psgi-dispatch", "close-8", 1200), mk("starman", "close-8", 1000),
	}}
	var b strings.Builder
	r.writePSGITargets(&b)
	tests := []struct{ name, want string }{
		{"dispatch met", "| actd-psgi-dispatch ≥ 1.00× starman, close-8 | 1.20× (1200 vs 1000 req/s) | yes |"},
		{"exclusive not measured", "| actd-psgi-exclusive ≥ 1.00× starman, close-8 | not measured | – |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("got\n%s\nwant a line %q", b.String(), tt.want)
			}
		})
	}
	if strings.Contains(b.String(), "close-1") {
		t.Errorf("got a row for close-1, which this run did not measure:\n%s", b.String())
	}
}

// runWithRate is a run of one second that served rate requests.
func runWithRate(rate float64) runMeasure {
	return runMeasure{wrk: wrkResult{requests: int(rate), elapsed: time.Second}}
}
