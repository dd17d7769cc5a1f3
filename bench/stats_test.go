package main

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want summary
	}{
		{"none", nil, summary{}},
		{"one", []float64{5}, summary{5, 5, 5}},
		{"odd", []float64{9, 1, 5}, summary{5, 1, 9}},
		{"even", []float64{4, 1, 2, 3}, summary{2.5, 1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarize(tt.in); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		in   []float64
		want string
	}{
		{nil, "–"},
		{[]float64{7}, "7"},
		{[]float64{3, 1, 2}, "2 (1–3)"},
		{[]float64{4, 4.2, 3.9}, "4"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := spread(tt.in, "%.0f"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		p    int
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(ds, tt.p); got != tt.want {
			t.Errorf("p%d: got %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := percentile(nil, 99); got != 0 {
		t.Errorf("no data: got %v, want 0", got)
	}
}
