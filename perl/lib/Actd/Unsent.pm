package Actd::Unsent;

# Actd::Unsent: writing a response the master gave back (U, revision 5).
# A response a child handed the master (W) that the master did not take,
# beyond its --offload-total, comes back to an idle child with the
# connection, the data and its range (docs/protocol.md, "Write
# completion"): the child writes it as a worker without "offload" would,
# blocking, and reads nothing of the next request. The rule is the Python
# adapter's (actd.unsent).

use strict;
use warnings;
use Errno qw(EINTR);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use Socket qw(SOL_SOCKET SO_SNDTIMEO);

our $VERSION = '0.1.0';

use constant {
    SEND_TIMEOUT => 60,        # seconds a client may take no byte, as the master's --send-timeout
    READ_SIZE    => 262144,    # bytes of the data read at a time
};

# write_range: write $length bytes of file $data from $offset to socket
# $conn, made blocking (the child that sent the W may have left it
# non-blocking) with a send timeout of $timeout seconds (SEND_TIMEOUT).
# Returns true if all went; false if the client went away, took no byte
# for the timeout, or the data ended first.
sub write_range {
    my ($conn, $data, $offset, $length, $timeout) = @_;
    $timeout //= SEND_TIMEOUT;
    my $flags = fcntl($conn, F_GETFL, 0) // return 0;
    fcntl($conn, F_SETFL, $flags & ~O_NONBLOCK) or return 0;
    setsockopt($conn, SOL_SOCKET, SO_SNDTIMEO, pack 'l!l!', $timeout, 0);
    while ($length > 0) {
        sysseek($data, $offset, 0) or return 0;
        my $n = sysread($data, my $buf, $length < READ_SIZE ? $length : READ_SIZE);
        return 0 if !$n;
        write_all($conn, $buf) or return 0;
        ($offset, $length) = ($offset + $n, $length - $n);
    }
    return 1;
}

# write_all: send all of $buf to $conn; false if a write failed.
sub write_all {
    my ($conn, $buf) = @_;
    my $at = 0;
    while ($at < length $buf) {
        my $n = syswrite($conn, $buf, length($buf) - $at, $at);
        if (!defined $n) {
            next if $! == EINTR;
            return 0;
        }
        $at += $n;
    }
    return 1;
}

1;

__END__

=head1 NAME

Actd::Unsent - write a response the actd master gave back (U)

=head1 DESCRIPTION

Used by L<Actd::Worker>: see docs/protocol.md, "Write completion", in the
actd repository.

=cut
