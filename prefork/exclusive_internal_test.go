package prefork

import (
	"slices"
	"strings"
	"testing"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// armPool is benchPool in exclusive mode with a real back-channel per slot,
// so the master's orders can be read from the child ends, and every child
// registered in slot order.
func armPool(t *testing.T, n int) (*Pool, []int) {
	t.Helper()
	p := benchPool(n, protocol.Exclusive)
	children := backChannels(t, p)
	return p, children
}

// backChannels gives every slot of p a real back-channel and returns the
// child ends, to read the master's messages from.
func backChannels(t testing.TB, p *Pool) []int {
	t.Helper()
	children := make([]int, len(p.slots))
	for i, s := range p.slots {
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(pair[0]); unix.Close(pair[1]) })
		s.ch, children[i] = pair[0], pair[1]
	}
	return children
}

// orders returns the types of the messages waiting at a child end, as one
// string; "A+" marks a KeepAccepting order.
func orders(t *testing.T, fd int) string {
	t.Helper()
	return strings.Join(received(t, fd), "")
}

// received returns the messages waiting at a child end: "A" for an order,
// "A+" for a KeepAccepting one, other types by letter.
func received(t *testing.T, fd int) []string {
	t.Helper()
	var got []string
	for {
		var buf [protocol.MessageSize]byte
		n, err := unix.Read(fd, buf[:])
		if err == unix.EAGAIN {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := protocol.Decode(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		o := string(rune(m.Type))
		if m.Type == protocol.Accept && m.Value == protocol.KeepAccepting {
			o += "+"
		}
		got = append(got, o)
	}
}

// TestRegisterAgain: after a low slot restarts and registers, the higher
// slots are told, one at a time and lowest first, to register again, so the
// kernel's wake order is slot order again. A child told so while it serves a
// connection reports that connection (S, B, I) before it registers (I).
func TestRegisterAgain(t *testing.T) {
	step := func(t *testing.T, p *Pool, s *slot, m protocol.Message) {
		t.Helper()
		if err := p.onMessage(s, m); err != nil {
			t.Fatalf("slot %d, %v: %v", s.num, m.Type, err)
		}
	}
	tests := []struct {
		name      string
		slot1     []protocol.Message // what slot 1 sends after its go-ahead, before it has registered again
		registers []int              // then the slots that answer I (registered), in turn
		orders    []string           // A orders received by slots 0, 1, 2
		served    uint64             // by slot 1
	}{
		{"idle", nil, []int{1, 2}, []string{"A", "A", "A"}, 0},
		{"short connections", []protocol.Message{{Type: protocol.Served, Value: 3}}, []int{1, 2}, []string{"A", "A", "A"}, 3},
		// Busy, slot 1 lets slot 2 go first; slot 2 then goes again.
		{"long connection", []protocol.Message{{Type: protocol.Served, Value: 1}, {Type: protocol.Busy}, {Type: protocol.Idle}}, []int{2, 1, 2}, []string{"A", "A", "AA"}, 2},
		// Slot 2 may have registered before slot 1 did, its I read after
		// slot 1's: it goes again.
		{"long connection, slot 2 heard last", []protocol.Message{{Type: protocol.Busy}, {Type: protocol.Idle}}, []int{1, 2, 2}, []string{"A", "A", "AA"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, children := armPool(t, 3)
			s0, s1 := p.slots[0], p.slots[1]
			// Slot 0 restarted: up, not registered.
			x := p.mode.(*exclusiveMode)
			s0.state = standby
			x.order.check = true // as start does
			p.idle.remove(0)
			x.order.next(p, x)
			step(t, p, s0, protocol.Message{Type: protocol.Idle}) // registered, behind 1 and 2
			if s1.state != moving || !x.order.isBehind(2) {       // slot 1 told first
				t.Fatalf("after slot 0 registered: slot 1 %v, slot 2 behind %v; want moving, true", s1.state, x.order.isBehind(2))
			}
			for _, m := range tt.slot1 {
				step(t, p, s1, m)
			}
			for _, n := range tt.registers {
				step(t, p, p.slots[n], protocol.Message{Type: protocol.Idle})
			}
			var got []string
			for i, fd := range children {
				got = append(got, orders(t, fd))
				if s := p.slots[i]; x.order.isBehind(i) || s.state != idle {
					t.Errorf("slot %d at the end: %+v", i, *s)
				}
			}
			if !slices.Equal(got, tt.orders) {
				t.Errorf("orders %q, want %q", got, tt.orders)
			}
			if p.idle.len() != 3 || x.order.arming != -1 {
				t.Errorf("idle %d, arming %d; want 3, -1", p.idle.len(), x.order.arming)
			}
			if s1.served != tt.served {
				t.Errorf("slot 1 served %d, want %d", s1.served, tt.served)
			}
		})
	}
}
