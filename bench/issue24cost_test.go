package main

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestPerRequest(t *testing.T) {
	tests := []struct {
		name     string
		cpu      time.Duration
		known    bool
		requests int
		want     float64
		wantOK   bool
	}{
		{"two snapshots 1.2 s apart, 16000 requests", 1200 * time.Millisecond, true, 16000, 75, true},
		{"sub-microsecond", 3 * time.Microsecond, true, 4, 0.75, true},
		{"not read", time.Second, false, 100, 0, false},
		{"nothing answered", time.Second, true, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := perRequest(tt.cpu, tt.known, tt.requests)
			if math.Abs(got-tt.want) > 1e-9 || ok != tt.wantOK {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// run24 is a close-8 run of round with cpu of the server's tree over
// requests.
func run24(round int, cpu time.Duration, requests int) issue24Run {
	return issue24Run{clientRun: clientRun{requests: requests, conns: requests, elapsed: 2 * time.Second},
		round: round, serverCPU: cpu, serverKnown: true}
}

func TestProxyCost(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name        string
		plain       []issue24Run
		proxy       []issue24Run
		wantRatio   float64 // 0: not measured
		wantMet     bool
		wantPairs   []float64
		wantRatioTx string
		wantCostTx  string
	}{
		{
			// requests/s swing (10000 to 14000) while CPU per request
			// stays: 50 µs without, 51 µs with.
			name:        "2% more CPU per request, met",
			plain:       []issue24Run{run24(0, 500*ms, 10000), run24(1, 700*ms, 14000), run24(2, 600*ms, 12000)},
			proxy:       []issue24Run{run24(0, 714*ms, 14000), run24(1, 510*ms, 10000), run24(2, 612*ms, 12000)},
			wantRatio:   1.02,
			wantMet:     true,
			wantPairs:   []float64{1.02, 1.02, 1.02},
			wantRatioTx: "1.02× (pairs 1.02–1.02)",
			wantCostTx:  "+2.0%",
		},
		{
			name:        "10% more, missed",
			plain:       []issue24Run{run24(0, 500*ms, 10000), run24(1, 500*ms, 10000)},
			proxy:       []issue24Run{run24(0, 550*ms, 10000), run24(1, 550*ms, 10000)},
			wantRatio:   1.10,
			wantPairs:   []float64{1.10, 1.10},
			wantRatioTx: "1.10× (pairs 1.10–1.10)",
			wantCostTx:  "+10.0%",
		},
		{
			name:        "4.9%, met",
			plain:       []issue24Run{run24(0, 1000*ms, 10000)},
			proxy:       []issue24Run{run24(0, 1049*ms, 10000)},
			wantRatio:   1.049,
			wantMet:     true,
			wantPairs:   []float64{1.049},
			wantRatioTx: "1.05×",
			wantCostTx:  "+4.9%",
		},
		{
			name:        "5.1%, missed",
			plain:       []issue24Run{run24(0, 1000*ms, 10000)},
			proxy:       []issue24Run{run24(0, 1051*ms, 10000)},
			wantRatio:   1.051,
			wantPairs:   []float64{1.051},
			wantRatioTx: "1.05×",
			wantCostTx:  "+5.1%",
		},
		{
			name:        "cheaper with the header: met",
			plain:       []issue24Run{run24(0, 500*ms, 10000)},
			proxy:       []issue24Run{run24(0, 450*ms, 10000)},
			wantRatio:   0.90,
			wantMet:     true,
			wantPairs:   []float64{0.90},
			wantRatioTx: "0.90×",
			wantCostTx:  "-10.0%",
		},
		{
			// The pairs are only the rounds that measured both, 2 and 3;
			// the cost is their median (the medians of each side's runs,
			// 50 and 60 µs, would say 1.20).
			name:        "pairs by round, a run not read",
			plain:       []issue24Run{run24(0, 500*ms, 10000), {round: 1, clientRun: clientRun{requests: 10000}}, run24(2, 500*ms, 10000), run24(3, 400*ms, 10000)},
			proxy:       []issue24Run{run24(1, 600*ms, 10000), run24(2, 600*ms, 10000), run24(3, 640*ms, 10000)},
			wantRatio:   1.40,
			wantPairs:   []float64{1.20, 1.60},
			wantRatioTx: "1.40× (pairs 1.20–1.60)",
			wantCostTx:  "+40.0%",
		},
		{
			// Contention moves both sides of a round alike, and the
			// rounds' ratios scatter (1.03, 1.08, 0.94): their median says
			// 1.03; the sides' medians (130 and 140 µs, from different
			// rounds) would say 1.08, a missed target.
			name:        "paired, not the sides' medians",
			plain:       []issue24Run{run24(0, 1000*ms, 10000), run24(1, 1300*ms, 10000), run24(2, 1600*ms, 10000)},
			proxy:       []issue24Run{run24(0, 1030*ms, 10000), run24(1, 1400*ms, 10000), run24(2, 1500*ms, 10000)},
			wantRatio:   1.03,
			wantMet:     true,
			wantPairs:   []float64{1.03, 1.4 / 1.3, 1.5 / 1.6},
			wantRatioTx: "1.03× (pairs 0.94–1.08)",
			wantCostTx:  "+3.0%",
		},
		{name: "no runs with the header", plain: []issue24Run{run24(0, 500*ms, 10000)}, wantRatioTx: "–", wantCostTx: "–"},
		{name: "no runs", wantRatioTx: "–", wantCostTx: "–"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newProxyCost(tt.plain, tt.proxy)
			r, ok := c.ratio()
			if ok != (tt.wantRatio != 0) || math.Abs(r-tt.wantRatio) > 1e-9 {
				t.Errorf("ratio: got %v, %v; want %v", r, ok, tt.wantRatio)
			}
			if met, measured := c.met(); met != tt.wantMet || measured != (tt.wantRatio != 0) {
				t.Errorf("met: got %v (measured %v), want %v", met, measured, tt.wantMet)
			}
			if !slices.EqualFunc(c.pairs, tt.wantPairs, func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }) {
				t.Errorf("pairs: got %v, want %v", c.pairs, tt.wantPairs)
			}
			if got := c.ratioText(); got != tt.wantRatioTx {
				t.Errorf("ratioText: got %q, want %q", got, tt.wantRatioTx)
			}
			if got := c.costText(); got != tt.wantCostTx {
				t.Errorf("costText: got %q, want %q", got, tt.wantCostTx)
			}
		})
	}
}
