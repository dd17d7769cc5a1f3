package prefork

import (
	"os"
	"testing"
	"time"
)

// TestParseStat: memory and CPU come from the fields after the command
// name, whatever the name holds.
func TestParseStat(t *testing.T) {
	tail := " S 1 2 3 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 99 1000000 300 18446744073709551615"
	for _, tc := range []struct {
		name, line string
		want       usage
		wantErr    bool
	}{
		{"plain", "42 (worker)" + tail, usage{memory: 300 * pageSize, cpu: 3 * time.Second, ok: true}, false},
		{"parens and spaces", "42 (a) (b c))" + tail, usage{memory: 300 * pageSize, cpu: 3 * time.Second, ok: true}, false},
		{"no name", "42 worker" + tail, usage{}, true},
		{"short", "42 (worker) S 1 2", usage{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.line))
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("got %+v, %v, want %+v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
	if u, err := readUsage(os.Getpid()); err != nil || u.memory == 0 {
		t.Errorf("readUsage(self): got %+v, %v, want some memory", u, err)
	}
}

// BenchmarkReadUsage is the per-child cost of a tick's reading
// (docs/operations.md, "Memory").
func BenchmarkReadUsage(b *testing.B) {
	pid := os.Getpid()
	for b.Loop() {
		if _, err := readUsage(pid); err != nil {
			b.Fatal(err)
		}
	}
}
