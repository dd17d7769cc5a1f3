package main

import (
	"strings"
	"testing"
	"time"
)

func TestIdleRow(t *testing.T) {
	window := 10 * time.Second
	tests := []struct {
		name string
		idle []idleMeasure
		want []string // substrings of the output, in order
	}{
		{
			name: "quiet master meets both targets",
			idle: []idleMeasure{{server: "actd-dispatch", window: window, master: schedStat{cpu: time.Millisecond, runs: 15, threads: 5}}},
			want: []string{"no measurable CPU | 1ms CPU in 10s (0.010%) | yes |", "at most 2 times a second (issue 11) | 1.5 wake-ups/s, 5 threads | yes |"},
		},
		{
			name: "master that wakes 12 times a second misses the wake-up target",
			idle: []idleMeasure{{server: "actd-dispatch", window: window, master: schedStat{cpu: 4 * time.Millisecond, runs: 120, threads: 7}}},
			want: []string{"(0.040%) | yes |", "12.0 wake-ups/s, 7 threads | **no** |"},
		},
		{
			name: "not measured",
			idle: []idleMeasure{{server: "actd-exclusive", window: window}},
			want: []string{"no measurable CPU | not measured |", "(issue 11) | not measured |"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			report{idle: tt.idle}.idleRow(&b, "actd-dispatch")
			got := b.String()
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("got %q, want it to contain %q (in order)", got, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
