// Package proxyproto reads the PROXY protocol header (HAProxy's
// doc/proxy-protocol.txt, versions 1 and 2) that a load balancer puts
// before a connection's first byte, and says which peers must send one.
// It is the policy and the parsing only, shared by the master
// (prefork/hold.go) and the Go worker library (prefork/worker): Parse is a
// pure function of the bytes peeked so far; Take peeks a socket and reads
// exactly the header's bytes, never past it; Peer and Accept tell a
// connection's peer, the one to trust or not. A leaf: it imports no other
// package of the module.
//
// The rule (docs/protocol.md, "PROXY protocol"): a connection accepted on
// listener INDEX whose peer is in one of INDEX's networks (Networks, from
// --proxy-protocol-from or ACTD_PROXY_FROM) must start with a header; from
// anywhere else it is served without one. A header that is malformed, or
// not complete within the reader's timeout, closes the connection without
// an answer. A v2 LOCAL command, a v1 UNKNOWN one and any family but TCP
// over IPv4 or IPv6 keep the socket's peer address (Header.Addr is then
// the zero netip.AddrPort).
package proxyproto
