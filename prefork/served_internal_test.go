package prefork

import (
	"testing"

	"github.com/actd/actd/protocol"
)

// TestServedListenerIgnored: the master reads only the count of a Served
// message, whatever listener it names (docs/protocol.md: the Go worker
// names the listener, the Python and Perl ones send 0, and neither is
// wrong), from an idle exclusive-mode child and from a busy dispatch-mode
// one under keep accepting.
func TestServedListenerIgnored(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  protocol.Mode
		state state // the child's, when it sends the Served
	}{
		{"exclusive, idle", protocol.Exclusive, idle},
		{"dispatch, busy", protocol.Dispatch, busy},
	} {
		for _, listener := range []uint16{0, 1, 7, 65535} {
			p := benchPool(1, tc.mode)
			s := p.slots[0]
			if tc.state == busy { // serving a connection from listener 1 under keep accepting
				s.state, s.listener = busy, 1
				p.idle.remove(0)
			}
			before, state, at := s.served, s.state, s.listener
			if err := p.onMessage(s, protocol.Message{Type: protocol.Served, Listener: listener, Value: 3}); err != nil {
				t.Errorf("%s, listener %d: got %v, want nil", tc.name, listener, err)
				continue
			}
			if s.served != before+3 || s.state != state || s.listener != at {
				t.Errorf("%s, listener %d: served %d, %v, listener %d; want %d, %v, %d",
					tc.name, listener, s.served, s.state, s.listener, before+3, state, at)
			}
		}
	}
}
