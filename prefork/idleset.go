package prefork

import "math/bits"

// idleSet is the set of idle slot numbers, below maxSlots. Lowest and Highest
// cost two word scans of at most 64 words each — a constant that does not
// grow with the pool — instead of a walk over every child as spamd does.
type idleSet struct {
	summary uint64                // bit w set: words[w] != 0
	words   [maxSlots / 64]uint64 // bit b of words[w]: slot 64*w+b is idle
	n       int
}

func (s *idleSet) add(slot int) {
	w, b := slot/64, uint(slot%64)
	if s.words[w]&(1<<b) != 0 {
		return
	}
	s.words[w] |= 1 << b
	s.summary |= 1 << uint(w)
	s.n++
}

func (s *idleSet) remove(slot int) {
	w, b := slot/64, uint(slot%64)
	if s.words[w]&(1<<b) == 0 {
		return
	}
	s.words[w] &^= 1 << b
	if s.words[w] == 0 {
		s.summary &^= 1 << uint(w)
	}
	s.n--
}

func (s *idleSet) has(slot int) bool { return s.words[slot/64]&(1<<uint(slot%64)) != 0 }

// len returns the number of idle slots.
func (s *idleSet) len() int { return s.n }

// lowest returns the lowest idle slot, or -1 if there is none.
func (s *idleSet) lowest() int {
	if s.summary == 0 {
		return -1
	}
	w := bits.TrailingZeros64(s.summary)
	return w*64 + bits.TrailingZeros64(s.words[w])
}

// highest returns the highest idle slot, or -1 if there is none.
func (s *idleSet) highest() int {
	if s.summary == 0 {
		return -1
	}
	w := 63 - bits.LeadingZeros64(s.summary)
	return w*64 + 63 - bits.LeadingZeros64(s.words[w])
}
