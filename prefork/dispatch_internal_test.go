package prefork

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// dispatchPool is benchPool in dispatch mode with a real epoll set, a real
// back-channel per slot (the child ends are returned, to read the orders)
// and one real TCP listener, watched edge-triggered.
func dispatchPool(t testing.TB, n int) (*Pool, []int, net.Addr) {
	return dispatchPoolOn(t, n, "tcp", "127.0.0.1:0")
}

// dispatchPoolOn is dispatchPool with a listener on network and address.
func dispatchPoolOn(t testing.TB, n int, network, address string) (*Pool, []int, net.Addr) {
	t.Helper()
	p := benchPool(n, protocol.Dispatch)
	poll, err := newPoller()
	if err != nil {
		t.Fatal(err)
	}
	p.poll = poll
	t.Cleanup(poll.close)
	children := backChannels(t, p)
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f, err := ln.(interface{ File() (*os.File, error) }).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	l, err := newListener(Listener{Name: "test", FD: int(f.Fd())}, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	l.edge = l.tcp // as dispatchMode.setup does
	if l.edge != (network == "tcp") {
		t.Fatalf("%s listener: edge-triggered %v", network, l.edge)
	}
	p.listeners = []*listener{l}
	if err := p.poll.add(l.FD, listenEvents(l, true), kindListener, 0); err != nil {
		t.Fatal(err)
	}
	l.armed = true
	return p, children, ln.Addr()
}

// queueUp opens n connections to addr and waits until the listener's
// accept queue holds want of them.
func queueUp(t *testing.T, p *Pool, addr net.Addr, n, want int) {
	t.Helper()
	for range n {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		if q, _ := queueDepth(p.listeners[0].FD); q == want {
			return
		}
		if time.Now().After(deadline) {
			q, _ := queueDepth(p.listeners[0].FD)
			t.Fatalf("accept queue %d, want %d", q, want)
		}
	}
}

// takeOne accepts one connection from the listener, as a child does.
func takeOne(t *testing.T, p *Pool) {
	t.Helper()
	fd, _, err := unix.Accept4(p.listeners[0].FD, unix.SOCK_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
}

// TestDispatchOrders drives the dispatch decision with a real accept queue:
// orders go to the lowest idle slots and never outnumber the waiting
// connections; KeepAccepting when more wait than children are idle; a
// connection left without an order (an order used before its B was read)
// gets one when that B is read; an order that found nothing is given again.
func TestDispatchOrders(t *testing.T) {
	step := func(t *testing.T, p *Pool, n int, m protocol.Message) {
		t.Helper()
		if err := p.onMessage(p.slots[n], m); err != nil {
			t.Fatalf("slot %d, %v: %v", n, m.Type, err)
		}
	}
	tests := []struct {
		name   string
		busy   []int // slots busy at the start
		limit  map[int]uint64
		run    func(t *testing.T, p *Pool, addr net.Addr)
		orders [][]string // per slot
		starve bool       // the listener waits for an idle child at the end
	}{
		{
			name: "lowest idle slots, one per connection",
			run: func(t *testing.T, p *Pool, addr net.Addr) {
				queueUp(t, p, addr, 2, 2)
				dispatcher(p).dispatch(p.listeners[0])
			},
			orders: [][]string{{"A"}, {"A"}, nil, nil},
		},
		{
			name:  "more wait than idle: keep accepting, unless recycling is near",
			busy:  []int{0, 3},
			limit: map[int]uint64{2: 10},
			run: func(t *testing.T, p *Pool, addr net.Addr) {
				queueUp(t, p, addr, 4, 4)
				dispatcher(p).dispatch(p.listeners[0])
			},
			orders: [][]string{nil, {"A+"}, {"A"}, nil},
			starve: true,
		},
		{
			name: "orders out cover the queue; B read as the queue empties",
			run: func(t *testing.T, p *Pool, addr net.Addr) {
				queueUp(t, p, addr, 1, 1)
				dispatcher(p).dispatch(p.listeners[0]) // slot 0
				queueUp(t, p, addr, 1, 2)
				dispatcher(p).dispatch(p.listeners[0]) // slot 1
				takeOne(t, p)                          // slot 0's accept
				step(t, p, 0, protocol.Message{Type: protocol.Busy})
				takeOne(t, p) // slot 1's
				step(t, p, 1, protocol.Message{Type: protocol.Busy})
			},
			orders: [][]string{{"A"}, {"A"}, nil, nil},
		},
		{
			name: "an order used before its B is read: the B brings the next order",
			run: func(t *testing.T, p *Pool, addr net.Addr) {
				queueUp(t, p, addr, 1, 1)
				dispatcher(p).dispatch(p.listeners[0]) // slot 0
				takeOne(t, p)                          // slot 0 accepts; its B is not read yet
				queueUp(t, p, addr, 1, 1)
				dispatcher(p).dispatch(p.listeners[0]) // one waits, one order out: none sent
				if p.listeners[0].orders != 1 || !p.listeners[0].unsure {
					t.Fatalf("orders %d, unsure %v; want 1, true", p.listeners[0].orders, p.listeners[0].unsure)
				}
				step(t, p, 0, protocol.Message{Type: protocol.Busy})
			},
			orders: [][]string{{"A"}, {"A"}, nil, nil},
		},
		{
			name: "an order that found nothing: the same child is ordered again",
			run: func(t *testing.T, p *Pool, addr net.Addr) {
				queueUp(t, p, addr, 1, 1)
				dispatcher(p).dispatch(p.listeners[0]) // slot 0
				takeOne(t, p)                          // another took it
				queueUp(t, p, addr, 1, 1)              // its event not handled yet
				step(t, p, 0, protocol.Message{Type: protocol.Idle})
			},
			orders: [][]string{{"A", "A"}, nil, nil, nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, children, addr := dispatchPool(t, 4)
			for _, n := range tt.busy {
				p.idle.remove(n)
				p.slots[n].state = busy
			}
			for n, limit := range tt.limit {
				p.slots[n].limit = limit
			}
			tt.run(t, p, addr)
			for i, fd := range children {
				if got := received(t, fd); !slices.Equal(got, tt.orders[i]) {
					t.Errorf("slot %d got %q, want %q", i, got, tt.orders[i])
				}
			}
			l := p.listeners[0]
			q, _ := queueDepth(l.FD)
			if l.orders > q {
				t.Errorf("%d orders out for %d waiting connections", l.orders, q)
			}
			if l.starved != tt.starve || l.armed == tt.starve {
				t.Errorf("starved %v, watched %v; want starved %v", l.starved, l.armed, tt.starve)
			}
		})
	}
}

// TestLevelListenerOneOrder: a unix listener, whose queue length the master
// does not know, has one order out at a time and is not watched meanwhile;
// the child's answer must wake the master (the reports are armed), which
// then watches the listener again.
func TestLevelListenerOneOrder(t *testing.T) {
	p, children, addr := dispatchPoolOn(t, 2, "unix", filepath.Join(t.TempDir(), "l.sock"))
	l := p.listeners[0]
	c, err := net.Dial("unix", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dispatcher(p).dispatch(l)
	if l.orders != 1 || l.armed || !p.mode.wantReports() {
		t.Fatalf("after the order: orders %d, watched %v, reports wanted %v; want 1, false, true", l.orders, l.armed, p.mode.wantReports())
	}
	if err := p.onMessage(p.slots[0], protocol.Message{Type: protocol.Busy}); err != nil {
		t.Fatal(err)
	}
	if l.orders != 0 || !l.armed || p.mode.wantReports() {
		t.Errorf("after B: orders %d, watched %v, reports wanted %v; want 0, true, false", l.orders, l.armed, p.mode.wantReports())
	}
	if got := received(t, children[0]); !slices.Equal(got, []string{"A"}) {
		t.Errorf("slot 0 got %q, want one order", got)
	}
}

// dispatcher returns p's dispatch mode.
func dispatcher(p *Pool) *dispatchMode { return p.mode.(*dispatchMode) }

// TestNoOverloadWarningWhileStarting: connections that wait while the
// first children start (every socket-activated cold start) are counted,
// but logged as a warning only when no child is starting.
func TestNoOverloadWarningWhileStarting(t *testing.T) {
	for _, tc := range []struct {
		name     string
		starting bool
		warnings int
	}{
		{"children starting", true, 0},
		{"none starting", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, addr := dispatchPool(t, 1)
			var rec levelCounter
			p.log = slog.New(&rec)
			p.idle.remove(0)
			p.slots[0].state = busy
			p.reports.starting = tc.starting
			queueUp(t, p, addr, 1, 1)
			dispatcher(p).dispatch(p.listeners[0])
			if p.stats.Overloads != 1 || rec.warnings != tc.warnings {
				t.Errorf("overloads %d, warnings %d; want 1, %d", p.stats.Overloads, rec.warnings, tc.warnings)
			}
		})
	}
}

// levelCounter is a slog.Handler that counts warnings.
type levelCounter struct{ warnings int }

func (c *levelCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *levelCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		c.warnings++
	}
	return nil
}
func (c *levelCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *levelCounter) WithGroup(string) slog.Handler      { return c }
