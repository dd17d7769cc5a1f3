package Actd::Protocol;

# Actd::Protocol: the wire of actd's back-channel (docs/protocol.md), as
# the Go package protocol has it up to REVISION, in one place: the message
# letters, the capability bits, the values with a meaning, the header
# layout. A name is the Go name in upper case (CAP_FORK: the capability,
# FORK: the message). protocol/languages_test.go runs perl on this module
# and fails when a name up to REVISION is missing or disagrees with Go.

use strict;
use warnings;
use Exporter 'import';

our $VERSION = '0.1.0';

use constant {
    REVISION    => 6,             # the protocol revision Actd::Worker is written for
    WIRE        => 1,             # the header format, the second byte of every message
    HEADER      => 'a1 C n N',    # type, wire, listener (u16), value (u32), network order
    HEADER_SIZE => 8,
    MAX_TEXT    => 248,           # the longest text after the header (R)
    FIRST_FD    => 3,             # listener i is fd 3 + i; the back-channel follows them
    TRAILER     => 'Q> Q>',       # revision 5: W's and U's offset and length (u64), after the header
    TRAILER_SIZE => 16,
    MAX_ADDRESS  => 48,           # revision 6: the longest address trailer (HOST:PORT) on C, K, W, U
};

# Messages, child -> master.
use constant {
    HELLO   => 'H',    # listener: the capabilities; value: the PID
    IDLE    => 'I',
    BUSY    => 'B',    # listener: where the connection came in
    PONG    => 'O',    # value: the ping's
    SERVED  => 'S',    # value: how many connections, finished without a B
    REQUEST => 'R',    # revision 2: the request in hand, as text
    KEEP    => 'K',    # revision 3: a connection given back, its fd attached
    WRITE   => 'W',    # revision 5: finish this response: the connection and the data attached, a trailer
    TALLY   => 'T',    # revision 6, optional: request counts since the last T (binary trailer: Actd::Tally)
};

# Messages, master -> child.
use constant {
    ACCEPT     => 'A',    # listener: where to accept
    PING       => 'P',
    DRAIN      => 'D',
    CONNECTION => 'C',    # revision 3: a connection handed over, its fd attached
    FORK       => 'F',    # revision 3, to a zygote: fork the child of slot listener
    UNSENT     => 'U',    # revision 5: a W the master did not take: write it yourself (two fds, a trailer)
};

# Capabilities: the bits of a hello's listener field.
use constant {
    HANDOFF  => 1 << 0,    # takes C, may send K (revision 3)
    CAP_FORK => 1 << 1,    # a zygote: takes F (revision 3)
    SCREEN   => 1 << 2,    # accepts by itself under a filter, K from any state (revision 4)
    OFFLOAD  => 1 << 3,    # may hand the master a response to finish (W), takes U (revision 5)
    PROXY    => 1 << 4,    # reads PROXY headers, address trailers on C, K, W, U (revision 6)
    TLS      => 1 << 5,    # terminates TLS on the listeners of ACTD_TLS (revision 6)
};
use constant {    # the same, under the names the lead's spec gives them
    CAP_PROXY => PROXY,
    CAP_TLS   => TLS,
};

# Values with a meaning.
use constant {
    KEEP_ACCEPTING => 1,    # an A's: accept more on that listener after this one
    NOT_READY      => 1,    # a K's: accepted and found not ready (0: kept alive, parked)
    KEEP_ALIVE     => 1,    # a W's or U's: park the connection once sent (0: close it)
};

our @EXPORT_OK = qw(
    REVISION WIRE HEADER HEADER_SIZE MAX_TEXT FIRST_FD TRAILER TRAILER_SIZE
    HELLO IDLE BUSY PONG SERVED REQUEST KEEP WRITE TALLY
    ACCEPT PING DRAIN CONNECTION FORK UNSENT
    HANDOFF CAP_FORK SCREEN OFFLOAD PROXY TLS CAP_PROXY CAP_TLS MAX_ADDRESS
    KEEP_ACCEPTING NOT_READY KEEP_ALIVE
);

1;
