package prefork

import (
	"time"

	"github.com/actd/actd/protocol"
)

// tallies are the pool's request counts: the sum of every Tally (T) its
// children sent since Run started, and of the answers the master wrote
// itself to connections it held (answered). A child's death takes nothing away;
// counts a child made and had not sent yet when it died are lost.
type tallies struct {
	sum  protocol.Tallies
	seen bool // a Tally came
}

// add sums one Tally's counts (nil: none) into the pool's.
func (t *tallies) add(o *protocol.Tallies) {
	if o == nil {
		return
	}
	t.sum.Merge(o)
	t.seen = true
}

// answered counts an answer the master wrote itself (413 for a
// Content-Length over the limit, 408 for a request not whole in time) to
// a connection it held since, as a child's. t may be nil: nothing counts.
func (t *tallies) answered(status int, since time.Time) {
	if t == nil {
		return
	}
	t.sum.Add(status, time.Since(since))
	t.seen = true
}

// requestsInfo is what the children answered, as they told the master
// (T): a Snapshot's Requests.
type requestsInfo struct {
	Total   uint64            `json:"total"`   // requests answered
	Codes   map[string]uint64 `json:"codes"`   // by status code ("404"), else class ("5xx") or "other": protocol.TallyLabel; those counted only
	Bounds  []float64         `json:"bounds"`  // the duration buckets' upper bounds, in seconds (inclusive); +Inf after the last
	Buckets []uint64          `json:"buckets"` // cumulative: requests that took at most Bounds[i]; one more, for +Inf, equals Total
	Seconds float64           `json:"seconds"` // the sum of their durations
}

// info returns the counts for a snapshot: nil if no child sent a Tally.
func (t *tallies) info() *requestsInfo {
	if !t.seen {
		return nil
	}
	r := &requestsInfo{Total: t.sum.Count(), Codes: map[string]uint64{},
		Seconds: float64(t.sum.Micros) / 1e6}
	for i, n := range t.sum.Codes {
		if n > 0 {
			r.Codes[protocol.TallyLabel(i)] = n
		}
	}
	var below uint64
	for i, n := range t.sum.Buckets {
		below += n
		r.Buckets = append(r.Buckets, below)
		if i < len(protocol.TallyBounds) {
			r.Bounds = append(r.Bounds, float64(protocol.TallyBounds[i])/1e6)
		}
	}
	return r
}
