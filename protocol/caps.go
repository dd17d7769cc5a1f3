package protocol

import (
	"fmt"
	"strings"
)

// Version is the protocol revision this package speaks. The master puts it
// in EnvProtocol; a worker may send a message of revision r only if that
// value is at least r (Since). Revisions:
//
//	1  the first: H I B O S from children, A P D from the master
//	2  Hello carries Caps; Request (text) from children
//	3  Conn from the master and Keep from children, each with an fd, to and
//	   from workers that announce CapHandoff (accept filters); Fork, with
//	   the new child's back-channel, to a zygote that announces CapFork
//	   (preload)
//	4  CapScreen: under an accept filter (EnvFilter), a worker that
//	   announces it accepts by itself, as in exclusive mode, and gives the
//	   master (Keep, from any state) only what the filter finds not ready
//	5  CapOffload: Write from children, with two fds: the master finishes
//	   a response the client reads too slowly, then parks or closes the
//	   connection (write completion)
//	6  CapProxy: Conn, Keep, Write and Unsent may carry the client's
//	   address from a PROXY header (Message.Addr), between the master and
//	   a worker that announces it; EnvProxyFrom names the trusted networks.
//	   CapTLS: the worker terminates TLS on the listeners EnvTLS names,
//	   with the certificates the master passes after the back-channel
const Version = 6

// Caps is what a worker says it understands, in its Hello's Listener field.
// A revision-1 worker sends 0 there, and gets revision-1 messages only.
type Caps uint16

// Capabilities. None is required; each lets the master send messages the
// worker would otherwise take for garbage. Bits not listed are reserved and
// must be 0.
const (
	// CapHandoff: the worker takes connections handed to it as a file
	// descriptor over the back-channel (Conn, SCM_RIGHTS), for accept
	// filters, and may give idle keep-alive ones back (Keep).
	CapHandoff Caps = 1 << iota
	// CapFork: the worker, started as a zygote (EnvRole), loads the
	// application once and forks a child on each Fork order (preload).
	CapFork
	// CapScreen: under an accept filter (EnvFilter set, revision 4), the
	// worker accepts by itself, registered as in exclusive mode on the
	// master's Accept orders, applies the filter's readiness rule to what
	// it accepted, serves what is ready and gives the rest back (Keep).
	// Announced with CapHandoff only.
	CapScreen
	// CapOffload: under an accept filter (revision 5), the worker may hand
	// the master a connection with the rest of its response (Write, two
	// fds): the master sends it as the client reads, then parks the
	// connection (keep-alive) or closes it. Announced with CapHandoff
	// only; the master tells it the largest response it takes in
	// EnvOffloadMax.
	CapOffload
	// CapProxy: under --proxy-protocol-from (EnvProxyFrom set, revision
	// 6), the worker consumes the PROXY header of a connection it accepts
	// from a trusted peer, takes the client's address from a Conn or an
	// Unsent (Message.Addr) and sends it on Keep and Write. The master
	// refuses a worker without it when the setting is on.
	CapProxy
	// CapTLS: the worker terminates TLS (revision 6) on the listeners
	// named in EnvTLS, with the certificate and key the master passes in
	// the memfd named there; it never gives a TLS connection back (Keep)
	// nor hands it over to finish (Write), and applies the ClientHello
	// readiness rule to them when it screens (acceptfilter.HelloReady).
	CapTLS
)

// capNames names each capability, in bit order.
var capNames = []string{"handoff", "fork", "screen", "offload", "proxy", "tls"}

// Has reports whether c includes every capability in want.
func (c Caps) Has(want Caps) bool { return c&want == want }

// String lists c's capabilities by name, "none" for none, "+0x..." for
// unknown bits.
func (c Caps) String() string {
	var names []string
	known := Caps(0)
	for i, name := range capNames {
		if name != "" {
			known |= 1 << i
		}
		if name != "" && c&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	if rest := c &^ known; rest != 0 {
		names = append(names, fmt.Sprintf("+%#04x", uint16(rest)))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}
