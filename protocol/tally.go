package protocol

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"
)

// A Tally (revision 6) carries, after its header, a worker's request
// counts since its last Tally: a fixed binary trailer of TallySize bytes,
// network byte order:
//
//	NumTallyCodes    × u32  answers by status (TallyCodes, then one per class 1xx..5xx, then other)
//	NumTallyBuckets  × u32  requests by duration (TallyBounds, then +Inf), not cumulative
//	1                × u64  the sum of the durations, in microseconds
//
// Header: Listener and Value 0 (the master ignores them).

// TallyCodes are the status codes a Tally counts one by one; any other
// from 100 to 599 counts in its class (1xx..5xx), anything else as other.
var TallyCodes = [...]uint16{200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 413, 429, 431, 500, 502, 503, 504}

// TallyBounds are the upper bounds of the duration buckets, inclusive, in
// microseconds: Prometheus's default buckets (.005 s to 10 s). A last
// bucket, +Inf, takes the longer ones.
var TallyBounds = [...]uint64{5e3, 10e3, 25e3, 50e3, 100e3, 250e3, 500e3, 1e6, 2.5e6, 5e6, 10e6}

// Sizes of a Tally's trailer.
const (
	NumTallyCodes   = len(TallyCodes) + 6 // the codes, 5 classes, other
	NumTallyBuckets = len(TallyBounds) + 1
	TallySize       = 4*(NumTallyCodes+NumTallyBuckets) + 8
)

// Tallies are request counts: a Tally's trailer, or sums of many.
type Tallies struct {
	Codes   [NumTallyCodes]uint64   // by TallyLabel's index
	Buckets [NumTallyBuckets]uint64 // by duration bucket, not cumulative; the last is +Inf
	Micros  uint64                  // the sum of the durations, in microseconds
}

// codeIndex maps a status 100..599 to its index in Codes.
var codeIndex = func() (idx [600]uint8) {
	for s := 100; s < 600; s++ {
		idx[s] = uint8(len(TallyCodes) + s/100 - 1)
	}
	for i, c := range TallyCodes {
		idx[c] = uint8(i)
	}
	return idx
}()

// TallyLabel returns the label of Codes[i]: a status code ("404"), a class
// ("4xx"), or "other".
func TallyLabel(i int) string {
	switch {
	case i < len(TallyCodes):
		return strconv.Itoa(int(TallyCodes[i]))
	case i < NumTallyCodes-1:
		return strconv.Itoa(i-len(TallyCodes)+1) + "xx"
	}
	return "other"
}

// Add counts one answer with status, given d after the request came.
func (t *Tallies) Add(status int, d time.Duration) {
	i := NumTallyCodes - 1
	if status >= 100 && status < 600 {
		i = int(codeIndex[status])
	}
	t.Codes[i]++
	us := uint64(max(d, 0) / time.Microsecond)
	b := 0
	for b < len(TallyBounds) && us > TallyBounds[b] {
		b++
	}
	t.Buckets[b]++
	t.Micros += us
}

// Merge adds o's counts to t's.
func (t *Tallies) Merge(o *Tallies) {
	for i, n := range o.Codes {
		t.Codes[i] += n
	}
	for i, n := range o.Buckets {
		t.Buckets[i] += n
	}
	t.Micros += o.Micros
}

// Count returns how many requests t counts: the sum of its buckets.
func (t *Tallies) Count() uint64 {
	var n uint64
	for _, c := range t.Buckets {
		n += c
	}
	return n
}

// encodeTally writes t as a Tally's trailer into b (TallySize bytes). A
// count over the u32 range is cut to its maximum (a worker sends a Tally
// every second: none comes near).
func encodeTally(b []byte, t *Tallies) {
	if t == nil {
		t = &Tallies{}
	}
	for i, n := range t.Codes {
		binary.BigEndian.PutUint32(b[4*i:], uint32(min(n, math.MaxUint32)))
	}
	b = b[4*NumTallyCodes:]
	for i, n := range t.Buckets {
		binary.BigEndian.PutUint32(b[4*i:], uint32(min(n, math.MaxUint32)))
	}
	binary.BigEndian.PutUint64(b[4*NumTallyBuckets:], t.Micros)
}

// decodeTally reads a Tally's trailer. It returns an error wrapping
// ErrGarbage if b is not TallySize bytes long.
func decodeTally(b []byte) (*Tallies, error) {
	if len(b) != TallySize {
		return nil, fmt.Errorf("%w: tally trailer of %d bytes, want %d", ErrGarbage, len(b), TallySize)
	}
	t := &Tallies{}
	for i := range t.Codes {
		t.Codes[i] = uint64(binary.BigEndian.Uint32(b[4*i:]))
	}
	b = b[4*NumTallyCodes:]
	for i := range t.Buckets {
		t.Buckets[i] = uint64(binary.BigEndian.Uint32(b[4*i:]))
	}
	t.Micros = binary.BigEndian.Uint64(b[4*NumTallyBuckets:])
	return t, nil
}
