package prefork

import (
	"testing"

	"github.com/actd/actd/cgroup"
)

// TestChildLimits: a child's group gets memory.high a quarter above
// --max-child-memory and memory.max = --child-memory-max; no memory.high
// without the first, nor where it would not be below memory.max.
func TestChildLimits(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name            string
		maxChild, cgMax uint64
		want            cgroup.Limits
	}{
		{"neither", 0, 0, cgroup.Limits{}},
		{"max-child-memory", 40 * mb, 0, cgroup.Limits{High: 50 * mb}},
		{"child-memory-max", 0, 80 * mb, cgroup.Limits{Max: 80 * mb}},
		{"both", 40 * mb, 80 * mb, cgroup.Limits{High: 50 * mb, Max: 80 * mb}},
		{"high not below max", 40 * mb, 50 * mb, cgroup.Limits{Max: 50 * mb}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxChildMemory, cfg.ChildMemoryMax = tc.maxChild, tc.cgMax
			if got := childLimits(cfg); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
