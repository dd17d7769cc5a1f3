package Actd::Offload;

# Actd::Offload: handing a slow client's response to the master (W,
# docs/protocol.md "Write completion", revision 5), for
# Plack::Handler::Actd. The last write of a response goes out with
# MSG_DONTWAIT; when the client takes no byte for PATIENCE, the rest is
# offered to a finisher (Actd::Worker::finish through the handler): the
# rest of an array body in a memory file (memfd), a file body as the file
# itself (its fd, offset and length). The master sends it as the client
# reads and parks or closes the connection; the child serves the next one.
# The rule is the Go library's and the Python adapter's (actd.offload).

use strict;
use warnings;
use Config ();
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use Fcntl qw(O_RDWR O_CREAT O_EXCL);
use Socket qw(MSG_DONTWAIT);

our $VERSION = '0.1.0';

use constant {
    PATIENCE      => 0.010,      # seconds a write may wait before the rest goes to the master (as Go)
    SEND_SIZE     => 262144,     # bytes offered to one send(2)
    MFD_CLOEXEC   => 1,
    SENT          => 0,          # send_last: all sent
    TAKEN         => 1,          # send_last: the finisher took the rest: the connection is the master's
    FAILED        => -1,         # send_last: the client went away or took no byte for the timeout
};

# The numbers of memfd_create on the architectures Debian builds actd for;
# elsewhere a file under /dev/shm, unlinked, does as well.
our %MEMFD_CREATE = (x86_64 => 319, aarch64 => 279);

# send_last: send $$data from $offset to socket $conn, the end of a
# response. When the client takes no byte for PATIENCE, $finish->($rest_offset)
# is offered the rest (from that offset of $$data); it returns true if it
# took it. Waits at most $timeout seconds for each write otherwise.
# Returns TAKEN (the connection is the master's now), SENT, or FAILED.
sub send_last {
    my ($conn, $data, $offset, $timeout, $finish) = @_;
    my $offered = 0;
    while ($offset < length $$data) {
        my $n = send($conn, substr($$data, $offset, SEND_SIZE), MSG_DONTWAIT);
        if (defined $n) {
            $offset += $n;
            next;
        }
        next if $! == EINTR;
        return FAILED if $! != EAGAIN && $! != EWOULDBLOCK;
        next if writable($conn, PATIENCE);
        if (!$offered++) {
            return TAKEN if $finish->($offset);
        }
        return FAILED if !writable($conn, $timeout);
    }
    return SENT;
}

# send_file_last: send $length bytes of file $fh from $offset to socket
# $conn, the end of a response, read with sysread at that offset. When the
# client takes no byte for PATIENCE, $finish->($offset, $length) is
# offered the part left (of the file itself); it returns true if it took
# it. Returns TAKEN, SENT, or FAILED (also when the file ends first).
sub send_file_last {
    my ($conn, $fh, $offset, $length, $timeout, $finish) = @_;
    my ($buf, $at) = ('', 0);
    my $offered = 0;
    while ($length > 0) {
        if ($at >= length $buf) {
            sysseek($fh, $offset, 0) or return FAILED;
            my $n = sysread($fh, $buf, $length < SEND_SIZE ? $length : SEND_SIZE);
            return FAILED if !$n;
            $at = 0;
        }
        my $n = send($conn, substr($buf, $at), MSG_DONTWAIT);
        if (defined $n) {
            ($at, $offset, $length) = ($at + $n, $offset + $n, $length - $n);
            next;
        }
        next if $! == EINTR;
        return FAILED if $! != EAGAIN && $! != EWOULDBLOCK;
        next if writable($conn, PATIENCE);
        if (!$offered++) {
            return TAKEN if $finish->($offset, $length);
        }
        return FAILED if !writable($conn, $timeout);
    }
    return SENT;
}

# writable: whether socket $conn can take bytes within $seconds.
sub writable {
    my ($conn, $seconds) = @_;
    my $bits = '';
    vec($bits, fileno $conn, 1) = 1;
    my $n;
    do { $n = select(undef, my $out = $bits, undef, $seconds) } while $n < 0 && $! == EINTR;
    return $n > 0;
}

# memory_file: a handle on a new memory file (memfd_create, close-on-exec;
# else a file under /dev/shm, unlinked at once) holding $$data from
# $offset on, its position at its end. Returns undef (with $!) if none
# could be made or written: the child then writes the rest itself.
sub memory_file {
    my ($data, $offset) = @_;
    my $fh = memfd() // shm_file() // return undef;
    my $at = $offset;
    while ($at < length $$data) {
        my $n = syswrite($fh, $$data, length($$data) - $at, $at);
        if (!defined $n) {
            next if $! == EINTR;
            return undef;
        }
        $at += $n;
    }
    return $fh;
}

# memfd: a handle on memfd_create("actd-response", MFD_CLOEXEC), or undef
# where this architecture's number is unknown or the call fails.
sub memfd {
    my ($arch) = $Config::Config{archname} =~ /^([^-]+)/;
    my $number = $MEMFD_CREATE{ $arch // '' } // return undef;
    my $name = "actd-response";
    my $fd = syscall($number, $name, MFD_CLOEXEC);
    return undef if $fd < 0;
    open(my $fh, '+<&=', $fd) or do { require POSIX; POSIX::close($fd); return undef };
    binmode $fh;
    return $fh;
}

# shm_file: a handle on a new file under /dev/shm (memory), unlinked
# once open; undef if none could be made.
sub shm_file {
    for (1 .. 8) {
        my $path = sprintf '/dev/shm/actd-response-%d-%08x', $$, int rand 0xffffffff;
        if (sysopen(my $fh, $path, O_RDWR | O_CREAT | O_EXCL, 0600)) {
            unlink $path;
            binmode $fh;
            return $fh;
        }
    }
    return undef;
}

1;

__END__

=head1 NAME

Actd::Offload - hand the rest of a response a client reads slowly to the actd master

=head1 DESCRIPTION

Used by L<Plack::Handler::Actd>: see docs/perl.md, "Slow readers: write
completion", in the actd repository.

=cut
