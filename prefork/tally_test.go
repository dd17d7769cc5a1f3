package prefork_test

import (
	"testing"
	"time"

	"github.com/actd/actd/protocol"
)

// testTallies are what the tallier test worker sends, twice.
func testTallies() *protocol.Tallies {
	var t protocol.Tallies
	t.Add(200, 3*time.Millisecond)
	t.Add(200, 30*time.Millisecond)
	t.Add(503, 2*time.Second)
	return &t
}

// sendTallies sends testTallies twice, as the tallier test worker.
func sendTallies(send func([]byte)) {
	var buf [protocol.MaxPacket]byte
	for range 2 {
		send(protocol.Message{Type: protocol.Tally, Tallies: testTallies()}.Encode(buf[:]))
	}
}

// TestTalliesSummed: the master sums the Tallies a child sends from idle
// into the pool's counts, which stay after the child is gone, and kills
// no one for them.
func TestTalliesSummed(t *testing.T) {
	for _, mode := range protocolModes {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := fastConfig(mode)
			cfg.StartChildren = 2
			p, _ := startMisbehaving(t, cfg, "tallier")
			eventually(t, "the tallier's child gone and replaced", func() bool {
				s := snapshot(t, p)
				return s.Stats.Respawned >= 1 && s.Requests != nil && s.Requests.Total == 6
			})
			r := snapshot(t, p).Requests
			if r.Codes["200"] != 4 || r.Codes["503"] != 2 || len(r.Codes) != 2 {
				t.Errorf("codes = %v, want 4 × 200, 2 × 503", r.Codes)
			}
			// cumulative: le 0.005 has the 3 ms ones, le 0.05 the 30 ms ones too, le 2.5 all
			want := map[float64]uint64{0.005: 2, 0.01: 2, 0.05: 4, 1: 4, 2.5: 6, 10: 6}
			for i, le := range r.Bounds {
				if n, ok := want[le]; ok && r.Buckets[i] != n {
					t.Errorf("bucket le=%v: got %d, want %d (buckets %v)", le, r.Buckets[i], n, r.Buckets)
				}
			}
			if len(r.Buckets) != protocol.NumTallyBuckets || r.Buckets[len(r.Buckets)-1] != 6 {
				t.Errorf("buckets %v, want %d ending in 6", r.Buckets, protocol.NumTallyBuckets)
			}
			if want := 2 * (0.003 + 0.030 + 2); r.Seconds != want {
				t.Errorf("seconds = %v, want %v", r.Seconds, want)
			}
			if g := snapshot(t, p).Stats.Garbage; g != 0 {
				t.Errorf("garbage = %d, want 0: a Tally is no garbage", g)
			}
		})
	}
}
