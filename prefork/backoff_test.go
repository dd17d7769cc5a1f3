package prefork

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var b backoff
	if got := b.allows(t0, 5); got != 5 {
		t.Errorf("no failures: allows %d of 5, want 5", got)
	}
	for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		b.fail(t0, "exit status 1")
		if got := b.delay(); got != want {
			t.Errorf("after %d failures: delay %v, want %v", i+1, got, want)
		}
	}
	if got := b.allows(t0, 5); got != 0 {
		t.Errorf("within the delay: allows %d, want 0", got)
	}
	if got := b.allows(t0.Add(time.Second), 5); got != 1 {
		t.Errorf("after the delay: allows %d, want 1 (one probe at a time)", got)
	}
	for range 30 {
		b.fail(t0, "exit status 1")
	}
	if got := b.delay(); got != backoffMax {
		t.Errorf("after many failures: delay %v, want the cap %v", got, backoffMax)
	}
	for _, tc := range []struct {
		name    string
		started time.Time
		now     time.Time
		want    bool
	}{
		{"older child proves nothing", t0.Add(-time.Hour), t0.Add(time.Hour), false},
		{"new child, too young", t0.Add(time.Second), t0.Add(2 * time.Second), false},
		{"new child, proven", t0.Add(time.Second), t0.Add(time.Second + provenAge), true},
	} {
		if got := b.proves(tc.started, tc.now); got != tc.want {
			t.Errorf("%s: proves = %v, want %v", tc.name, got, tc.want)
		}
	}
}
