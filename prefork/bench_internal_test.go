package prefork

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/actd/actd/protocol"
)

// benchPool is a pool of n children in the master's bookkeeping only: no
// processes, no fds. It measures the master's own work per message.
func benchPool(n int, mode protocol.Mode) *Pool {
	p := &Pool{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler), changed: make(chan struct{}, 1),
		gens: generations{ready: &readiness{ch: make(chan struct{})}}, now: time.Now()}
	p.cfg.Mode = mode
	p.cfg.MaxChildren = max(n, 1)
	p.mode, _ = newMode(p, mode)
	p.table = p.mode.table()
	p.launcher = newLauncher(p, nil)
	p.mem = memory{cfg: &p.cfg, log: p.log}
	for i := range n {
		s := &slot{num: i, pidfd: -1, ch: -1, helloAt: p.now, state: idle, since: p.now}
		p.slots = append(p.slots, s)
		p.idle.add(i)
	}
	return p
}

// BenchmarkConnection is the master's work for one connection in exclusive
// mode — a busy message and an idle message — with the pool half busy. Its
// cost must not grow with the pool (spamd walks every child per message).
func BenchmarkConnection(b *testing.B) {
	for _, n := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("slots=%d", n), func(b *testing.B) {
			p := benchPool(n, protocol.Exclusive)
			for i := 0; i < n; i += 2 {
				p.onMessage(p.slots[i], protocol.Message{Type: protocol.Busy})
			}
			s := p.slots[n-1]
			b.ReportAllocs()
			for b.Loop() {
				if err := p.onMessage(s, protocol.Message{Type: protocol.Busy}); err != nil {
					b.Fatal(err)
				}
				if err := p.onMessage(s, protocol.Message{Type: protocol.Idle}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDispatchAnswers is the master's work for the answers to one
// dispatch-mode order — the child's busy and idle messages — with the pool
// half busy and a real (edge-triggered) listener. The order itself is a
// lowest-idle pick (BenchmarkPickLowestIdle) and a write.
func BenchmarkDispatchAnswers(b *testing.B) {
	for _, n := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("slots=%d", n), func(b *testing.B) {
			p, _, _ := dispatchPool(b, n)
			for i := 0; i < n; i += 2 {
				p.idle.remove(i)
				p.slots[i].state = busy
			}
			s, l := p.slots[n-1], p.listeners[0]
			b.ReportAllocs()
			for b.Loop() {
				// as order does, without the write:
				p.step(s, evOrder)
				l.orders++
				if err := p.onMessage(s, protocol.Message{Type: protocol.Busy}); err != nil {
					b.Fatal(err)
				}
				if err := p.onMessage(s, protocol.Message{Type: protocol.Idle}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPickLowestIdle is the dispatch decision: find the lowest idle
// slot, take it, put it back — with only the highest slot idle, spamd's
// worst case.
func BenchmarkPickLowestIdle(b *testing.B) {
	for _, n := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("slots=%d", n), func(b *testing.B) {
			var s idleSet
			s.add(n - 1)
			for b.Loop() {
				k := s.lowest()
				s.remove(k)
				s.add(k)
			}
		})
	}
}

// BenchmarkSpamdScan is spamd's way, for comparison: walk every child to
// find the lowest idle one.
func BenchmarkSpamdScan(b *testing.B) {
	for _, n := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("slots=%d", n), func(b *testing.B) {
			p := benchPool(n, protocol.Exclusive)
			for i := 0; i < n-1; i++ {
				p.slots[i].state = busy
			}
			for b.Loop() {
				low := -1
				for _, s := range p.slots {
					if s.state == idle && (low < 0 || s.num < low) {
						low = s.num
					}
				}
				if low != n-1 {
					b.Fatal(low)
				}
			}
		})
	}
}
