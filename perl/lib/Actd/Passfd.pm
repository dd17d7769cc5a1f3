package Actd::Passfd;

# Actd::Passfd: one packet with file descriptors attached (SCM_RIGHTS),
# sent and received with sendmsg(2) and recvmsg(2) through Perl's
# syscall(), as core Perl has neither: what a worker needs to take the
# connections actd hands over (C) and give them back (K) under an accept
# filter (docs/protocol.md, revision 3), and to hand the master a
# response to finish with two descriptors (W) or take one back (U,
# revision 5). The syscall numbers are known for x86_64 and aarch64, else
# come from syscall.ph (Debian: libperl5.xx).
# struct msghdr is packed by hand in its LP64 layout: available() is false
# on a perl whose pointers are not 64 bits wide.

use strict;
use warnings;
use Config ();
use Errno ();

our $VERSION = '0.1.0';

use constant {
    SOL_SOCKET       => 1,
    SCM_RIGHTS       => 1,
    MSG_CMSG_CLOEXEC => 0x40000000,
    MSG_CTRUNC       => 0x8,
    CMSG_HEADER      => 16,    # struct cmsghdr: size_t len, int level, int type
};

# The numbers of sendmsg and recvmsg on the architectures Debian builds
# actd for.
our %NUMBERS = (
    x86_64  => [ 46,  47 ],
    aarch64 => [ 211, 212 ],
);

my ($SYS_sendmsg, $SYS_recvmsg);
my %receivers;    # receive_fd's buffers, by packet size

# available: whether this perl can pass file descriptors (64-bit
# pointers, the syscall numbers known or in syscall.ph).
sub available {
    return 0 if ($Config::Config{ptrsize} // 0) != 8;
    return eval { load_numbers(); 1 } ? 1 : 0;
}

# load_numbers: the syscall numbers of this architecture, or dies.
sub load_numbers {
    return if defined $SYS_recvmsg;
    my ($arch) = $Config::Config{archname} =~ /^([^-]+)/;
    if (my $known = $NUMBERS{ $arch // '' }) {
        ($SYS_sendmsg, $SYS_recvmsg) = @$known;
        return;
    }
    local $SIG{__WARN__} = sub { };    # h2ph output redefines constants
    eval {
        package main;
        require 'syscall.ph';
        1;
    } or die "actd: passing file descriptors needs syscall.ph (Debian: libperl5): $@";
    ($SYS_sendmsg, $SYS_recvmsg) = (main::SYS_sendmsg(), main::SYS_recvmsg());
}

# receive_fd: one packet of at most $size bytes from socket fd $fd, and the
# file descriptor it carried (close-on-exec), or undef if none. Returns
# ('', undef) at end of file or on a reset; dies on any other error, and
# when more than one descriptor came (those that did are closed).
sub receive_fd {
    my ($packet, @fds) = receive_fds(@_);
    if (@fds > 1) {
        require POSIX;
        POSIX::close($_) for @fds;
        die "actd: more than one file descriptor attached to a packet\n";
    }
    return ($packet, $fds[0]);
}

# receive_fds: one packet of at most $size bytes from socket fd $fd, and
# the file descriptors it carried (close-on-exec; none, one for a C, two
# for a U), in order. Returns ('') at end of file or on a reset; dies on
# any other error, and when the descriptors did not fit (those that did
# are closed). The buffers and the struct msghdr pointing at them are made
# once per size and reused: a worker receives one per order.
sub receive_fds {
    my ($fd, $size) = @_;
    my $r = $receivers{$size} //= receiver($size);
    substr($r->{msg}, 40, 8, $r->{controllen});    # the kernel wrote the last call's length there
    my $n;
    do { $n = syscall($SYS_recvmsg, $fd + 0, $r->{msg}, MSG_CMSG_CLOEXEC) } while $n < 0 && $! == Errno::EINTR;
    if ($n < 0) {
        return ('') if $! == Errno::ECONNRESET;
        die "actd: recvmsg: $!\n";
    }
    my ($controllen, $flags) = unpack 'x40 J l', $r->{msg};
    return (substr($r->{buf}, 0, $n)) if !$controllen && !($flags & MSG_CTRUNC);
    my @fds;
    for (my $at = 0; $at + CMSG_HEADER <= $controllen;) {
        my ($len, $level, $type) = unpack 'J l l', substr $r->{ctrl}, $at, CMSG_HEADER;
        last if $len < CMSG_HEADER;
        if ($level == SOL_SOCKET && $type == SCM_RIGHTS) {
            push @fds, unpack 'l*', substr $r->{ctrl}, $at + CMSG_HEADER, $len - CMSG_HEADER;
        }
        $at += ($len + 7) & ~7;
    }
    if ($flags & MSG_CTRUNC) {
        require POSIX;
        POSIX::close($_) for @fds;
        die "actd: more file descriptors attached to a packet than fit\n";
    }
    return (substr($r->{buf}, 0, $n), @fds);
}

# receiver: the buffers receive_fd reads packets of $size bytes into, and
# the struct msghdr (LP64) that points at them. The strings are never
# assigned again, so their buffers stay where the pointers say.
sub receiver {
    my ($size) = @_;
    load_numbers();
    my %r = (buf => "\0" x $size, ctrl => "\0" x 64);
    own($r{buf}), own($r{ctrl});
    $r{iov} = pack 'J J', address($r{buf}), $size;
    own($r{iov});
    $r{controllen} = pack 'J', length $r{ctrl};
    $r{msg}        = pack 'J L x4 J J J J l x4', 0, 0, address($r{iov}), 1, address($r{ctrl}), length $r{ctrl}, 0;
    return \%r;
}

# own: gives a string a buffer of its own (not shared copy-on-write), which
# the kernel may write into through a pointer.
sub own {
    substr($_[0], 0, 1, substr($_[0], 0, 1));
}

# send_fd: $bytes as one packet on socket fd $fd with descriptor $passed
# attached. Returns false (with $!) if it failed: the master is gone.
sub send_fd {
    my ($fd, $bytes, $passed) = @_;
    return send_fds($fd, $bytes, $passed);
}

# send_fds: $bytes as one packet on socket fd $fd with the descriptors
# @passed attached, in order, in one SCM_RIGHTS (a W: the connection, then
# the data). Returns false (with $!) if it failed: the master is gone.
sub send_fds {
    my ($fd, $bytes, @passed) = @_;
    load_numbers();
    my $data = pack 'l*', @passed;
    my $ctrl = pack('J l l', CMSG_HEADER + length $data, SOL_SOCKET, SCM_RIGHTS) . $data;
    $ctrl .= "\0" x (-length($ctrl) % 8);    # CMSG_SPACE: padded to 8 bytes
    my $iov = pack 'J J', address($bytes), length $bytes;
    my $msg = pack 'J L x4 J J J J l x4', 0, 0, address($iov), 1, address($ctrl), length $ctrl, 0;
    my $n;
    do { $n = syscall($SYS_sendmsg, $fd + 0, $msg, 0) } while $n < 0 && $! == Errno::EINTR;
    return $n >= 0;
}

# address: the address of a string's buffer, for a struct the kernel reads.
sub address { unpack 'J', pack 'p', $_[0] }

1;

__END__

=head1 NAME

Actd::Passfd - send and receive a file descriptor over a Unix socket, in core Perl

=head1 SYNOPSIS

  my ($packet, $fd) = Actd::Passfd::receive_fd(fileno $channel, 256);
  Actd::Passfd::send_fd(fileno $channel, $header, fileno $conn) or warn "sendmsg: $!";

=head1 DESCRIPTION

Used by L<Actd::Worker> for actd's accept filters (docs/protocol.md,
"Accept filters: connections handed over").

=cut
