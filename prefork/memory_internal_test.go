package prefork

import (
	"testing"
	"time"

	"github.com/actd/actd/protocol"
)

// TestTrendNext: the growth per connection comes from two readings at
// connections' ends; a child that stops growing has its estimate halved,
// not forgotten; a reading with no connection finished since moves the
// base only.
func TestTrendNext(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name           string
		t              trend
		memory, served uint64
		want           trend
	}{
		{"first reading", trend{}, 10 * mb, 1, trend{base: 10 * mb, served: 1}},
		{"second: rated", trend{base: 10 * mb, served: 1}, 18 * mb, 3, trend{base: 18 * mb, served: 3, growth: 4 * mb, rated: true}},
		{"stopped growing", trend{base: 18 * mb, served: 3, growth: 4 * mb, rated: true}, 18 * mb, 4, trend{base: 18 * mb, served: 4, growth: 2 * mb, rated: true}},
		{"shrank", trend{base: 18 * mb, served: 3, growth: 4 * mb, rated: true}, 12 * mb, 4, trend{base: 12 * mb, served: 4, growth: 2 * mb, rated: true}},
		{"grows faster", trend{base: 18 * mb, served: 3, growth: 1 * mb, rated: true}, 26 * mb, 4, trend{base: 26 * mb, served: 4, growth: 8 * mb, rated: true}},
		{"nothing finished since", trend{base: 18 * mb, served: 3, growth: 4 * mb, rated: true}, 20 * mb, 3, trend{base: 20 * mb, served: 3, growth: 4 * mb, rated: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.next(tc.memory, tc.served); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestMemoryDue: at a connection's end a child is read while its growth is
// unknown, when its reading is memoryEvery old, and when it is within one
// connection's growth of the limit (from the last reading, or from the
// last one at an end plus the connections since); otherwise not, and
// never without a limit or for a child told to end.
func TestMemoryDue(t *testing.T) {
	const mb = 1 << 20
	now := time.Unix(1000, 0)
	fresh := now.Add(-time.Millisecond)
	rated := trend{base: 20 * mb, served: 5, growth: 4 * mb, rated: true}
	for _, tc := range []struct {
		name   string
		limit  uint64
		fate   fate
		served uint64 // accepted, all finished (idle)
		u      usage
		want   bool
	}{
		{"no limit", 0, living, 6, usage{memory: 90 * mb, at: fresh, trend: rated}, false},
		{"draining", 40 * mb, draining, 6, usage{memory: 90 * mb, at: fresh, trend: rated}, false},
		{"growth unknown", 40 * mb, living, 2, usage{memory: 12 * mb, at: fresh, trend: trend{base: 12 * mb, served: 1}}, true},
		{"far, fresh", 40 * mb, living, 6, usage{memory: 20 * mb, at: fresh, trend: rated}, false},
		{"far, old", 40 * mb, living, 6, usage{memory: 20 * mb, at: now.Add(-memoryEvery), trend: rated}, true},
		{"one connection from the limit", 40 * mb, living, 6, usage{memory: 37 * mb, at: fresh, trend: rated}, true},
		{"over at the last reading", 40 * mb, living, 6, usage{memory: 41 * mb, at: fresh, trend: trend{base: 20 * mb, served: 5, rated: true}}, true},
		{"connections since the base", 40 * mb, living, 10, usage{memory: 20 * mb, at: fresh, trend: rated}, true},
		{"no growth", 40 * mb, living, 60, usage{memory: 39 * mb, at: fresh, trend: trend{base: 39 * mb, served: 5, rated: true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxChildMemory = tc.limit
			m := memory{cfg: &cfg}
			s := &slot{state: idle, fate: tc.fate, served: tc.served, usage: tc.u}
			if got := m.due(s, now); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMemoryRoom: a child gets a KeepAccepting batch only while its growth
// is known and a batch of it stays under the limit; always without one.
func TestMemoryRoom(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name  string
		limit uint64
		u     usage
		n     uint64
		want  bool
	}{
		{"no limit", 0, usage{}, 32, true},
		{"growth unknown", 400 * mb, usage{memory: 10 * mb, trend: trend{base: 10 * mb, served: 1}}, 32, false},
		{"no growth", 40 * mb, usage{memory: 39 * mb, trend: trend{base: 39 * mb, served: 5, rated: true}}, 32, true},
		{"batch fits", 400 * mb, usage{memory: 20 * mb, trend: trend{base: 20 * mb, served: 5, growth: 4 * mb, rated: true}}, 32, true},
		{"batch does not fit", 100 * mb, usage{memory: 20 * mb, trend: trend{base: 20 * mb, served: 5, growth: 4 * mb, rated: true}}, 32, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxChildMemory = tc.limit
			m := memory{cfg: &cfg}
			s := &slot{state: idle, served: 5, usage: tc.u}
			if got := m.room(s, tc.n); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMemoryOver: a child is recycled for its memory only over a limit,
// once it served (in a mode whose children report connections), and not
// when it was told to end already.
func TestMemoryOver(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name   string
		limit  uint64
		mode   protocol.Mode
		fate   fate
		served uint64
		memory uint64
		want   bool
	}{
		{"no limit", 0, protocol.Dispatch, living, 5, 900 * mb, false},
		{"under", 40 * mb, protocol.Dispatch, living, 5, 39 * mb, false},
		{"at the limit", 40 * mb, protocol.Dispatch, living, 5, 40 * mb, false},
		{"over", 40 * mb, protocol.Dispatch, living, 5, 41 * mb, true},
		{"over, draining", 40 * mb, protocol.Dispatch, draining, 5, 41 * mb, false},
		{"over, not served yet", 40 * mb, protocol.Dispatch, living, 0, 41 * mb, false},
		{"over, shared mode", 40 * mb, protocol.Shared, living, 0, 41 * mb, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxChildMemory, cfg.Mode = tc.limit, tc.mode
			m := memory{cfg: &cfg}
			s := &slot{state: idle, fate: tc.fate, served: tc.served, usage: usage{memory: tc.memory}}
			if got := m.over(s); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
