package protocol

import (
	"fmt"
	"net/netip"
)

// MaxAddr is the longest client address a message carries (revision 6):
// "[" + an IPv6 address of up to 39 characters + "]:" + a port of up to 5.
const MaxAddr = 48

// HasAddr reports whether messages of type t may carry the client's
// address (revision 6, CapProxy): a Conn or a Keep after its header, a
// Write or an Unsent after its trailer. Present only when a PROXY header
// gave the connection an address; absent, the socket's peer is the client.
func (t Type) HasAddr() bool { return t == Conn || t == Keep || t == Write || t == Unsent }

// decodeAddr sets m.Addr from b, what follows the header (and trailer) of
// a message whose type HasAddr. It returns an error wrapping ErrGarbage
// for more than MaxAddr bytes, or for text that is not HOST:PORT with an
// IP address (net.JoinHostPort's form: IPv6 in brackets).
func (m *Message) decodeAddr(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(b) > MaxAddr {
		return fmt.Errorf("%w: %v address of %d bytes, want at most %d", ErrGarbage, m.Type, len(b), MaxAddr)
	}
	if _, err := netip.ParseAddrPort(string(b)); err != nil {
		return fmt.Errorf("%w: %v address %q: %v", ErrGarbage, m.Type, b, err)
	}
	m.Addr = string(b)
	return nil
}
