package prefork

// trend is how a child's memory grows per connection, from the readings
// taken at the ends of its connections (a tick's reading may fall in the
// middle of one).
type trend struct {
	base   uint64 // memory at the last reading at a connection's end
	served uint64 // connections finished then
	growth uint64 // bytes per connection: the last growth seen, or half the estimate before if more
	rated  bool   // growth was seen once: two readings with connections between
}

// next returns t after a reading of memory at a connection's end, with
// served connections finished. A child that stops growing has its estimate
// halved at each such reading rather than zeroed, so that one connection
// that keeps nothing does not hide the leak of the next.
func (t trend) next(memory, served uint64) trend {
	if t.base == 0 || served <= t.served {
		return trend{base: memory, served: served, growth: t.growth, rated: t.rated}
	}
	seen := uint64(0)
	if memory > t.base {
		seen = (memory - t.base) / (served - t.served)
	}
	return trend{base: memory, served: served, growth: max(seen, t.growth/2), rated: true}
}

// reaches reports whether memory plus n connections' growth passes limit.
func (t trend) reaches(memory, n, limit uint64) bool {
	switch {
	case memory >= limit:
		return true
	case t.growth == 0:
		return false
	}
	return n > (limit-memory)/t.growth
}

// finished returns how many connections slot s has finished: those it
// accepted but the one in hand while busy, whose growth a reading taken
// now (a tick's) sees only in part.
func (s *slot) finished() uint64 {
	if (s.state == busy || s.state == movingBusy) && s.served > 0 {
		return s.served - 1
	}
	return s.served
}
