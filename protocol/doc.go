// Package protocol is the contract between the actd master and its workers:
// the fd layout a child starts with, the environment it gets, the accept
// modes, and the back-channel messages with their codec and capability
// negotiation. It is a leaf: the master (package prefork) and every worker
// library (package prefork/worker; the Python and Perl adapters speak the
// same wire with their own code) import it, and it imports neither.
//
// A child starts with this layout (fds.go):
//
//	fd 0        /dev/null
//	fd 1, 2     the master's stdout and stderr
//	fd 3..3+n-1 the n listening sockets (LISTEN_FDS=n), non-blocking
//	fd 3+n      the back-channel (ACTD_CHANNEL_FD), a SOCK_SEQPACKET socket;
//	            absent in shared mode
//
// Every back-channel packet starts with an 8-byte header (message.go):
//
//	 0      1        2        4                8
//	┌──────┬────────┬────────┬────────────────┐┌───────────────────┐
//	│ type │ wire 1 │listener│     value      ││ text, 0..MaxText  │
//	└──────┴────────┴────────┴────────────────┘└───────────────────┘
//	 ASCII   format   uint16    uint32 (BE)     only types with text
//
// and a message of a type that carries a file descriptor has it in the
// packet's SCM_RIGHTS ancillary data (fd.go).
//
// Negotiation (caps.go): the master says which protocol revision it speaks
// in ACTD_PROTOCOL; a worker says which optional messages it understands in
// its Hello's listener field. The master sends a worker only messages of
// revision 1 plus those its capabilities name, so a worker written against
// revision 1 keeps working unchanged. docs/protocol.md is the reference.
package protocol
