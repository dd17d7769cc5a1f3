package prefork

import "testing"

// TestUpCount: a generation's child is up once it said hello and while its
// back-channel is open; one that died (exiting, not reaped yet) is not, or
// a reload into a worker that crashes at start would count its dead as up
// and take over from the generation that serves.
func TestUpCount(t *testing.T) {
	for _, tc := range []struct {
		state state
		want  int
	}{
		{starting, 0},
		{greeted, 0}, // not ready yet
		{idle, 1},
		{busy, 1},
		{exiting, 0},
	} {
		t.Run(tc.state.String(), func(t *testing.T) {
			p, _, _ := dispatchPool(t, 1)
			s := p.slots[0]
			s.gen, s.state = 2, tc.state
			if got := p.upCount(2); got != tc.want {
				t.Errorf("got %d up, want %d", got, tc.want)
			}
		})
	}
}
