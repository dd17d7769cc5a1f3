package main

import (
	"fmt"
	"slices"
)

// summary is the median and range of a set of figures.
type summary struct {
	median, min, max float64
}

// summarize returns the median, min and max of xs (the mean of the middle
// two for an even count). It returns the zero summary for no figures.
func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	med := s[mid]
	if len(s)%2 == 0 {
		med = (s[mid-1] + s[mid]) / 2
	}
	return summary{median: med, min: s[0], max: s[len(s)-1]}
}

// spread formats xs as "median (min–max)" with verb, or one figure when
// min and max print the same, or "–" for none.
func spread(xs []float64, verb string) string {
	if len(xs) == 0 {
		return "–"
	}
	s := summarize(xs)
	lo, hi := fmt.Sprintf(verb, s.min), fmt.Sprintf(verb, s.max)
	if lo == hi {
		return lo
	}
	return fmt.Sprintf(verb+" ("+verb+"–"+verb+")", s.median, s.min, s.max)
}
