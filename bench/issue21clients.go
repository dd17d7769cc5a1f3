package main

import "fmt"

// patternCheck is an io.Writer that checks the bytes written to it, in
// order, against issue21Byte of their offset: a slow reader's body.
type patternCheck struct{ n int64 }

// Write returns len(p), or the count of right bytes and an error at the
// first wrong one.
func (c *patternCheck) Write(p []byte) (int, error) {
	for i, b := range p {
		if want := issue21Byte(c.n); b != want {
			return i, fmt.Errorf("byte %d: got %#x, want %#x", c.n, b, want)
		}
		c.n++
	}
	return len(p), nil
}
