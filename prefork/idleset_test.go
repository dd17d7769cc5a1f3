package prefork

import (
	"math/rand/v2"
	"testing"
)

// TestIdleSet checks lowest/highest against a plain slice under random
// adds and removes across the whole slot range.
func TestIdleSet(t *testing.T) {
	var s idleSet
	ref := make([]bool, maxSlots)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		n := r.IntN(maxSlots)
		if r.IntN(2) == 0 {
			s.add(n)
			ref[n] = true
		} else {
			s.remove(n)
			ref[n] = false
		}
		lo, hi, count := -1, -1, 0
		for j, ok := range ref {
			if ok {
				if lo < 0 {
					lo = j
				}
				hi = j
				count++
			}
		}
		if s.lowest() != lo || s.highest() != hi || s.len() != count {
			t.Fatalf("step %d: lowest, highest, len = %d, %d, %d; want %d, %d, %d",
				i, s.lowest(), s.highest(), s.len(), lo, hi, count)
		}
	}
}
