package Actd::Epoll;

# Actd::Epoll: an epoll set, through Perl's syscall() and the kernel's
# numbers for it (known for x86_64 and aarch64, else from syscall.ph,
# shipped with Debian's perl in libperl5.xx), so an exclusive-mode worker
# can register its listeners with EPOLLEXCLUSIVE without an XS module.
# Linux only. Level-triggered; an entry's data is its file descriptor.

use strict;
use warnings;
use Config ();
use Errno ();

our $VERSION = '0.1.0';

use constant {
    EPOLL_CLOEXEC  => 0x80000,    # = O_CLOEXEC
    EPOLL_CTL_ADD  => 1,
    EPOLL_CTL_DEL  => 2,
    EPOLLIN        => 0x001,
    EPOLLEXCLUSIVE => 1 << 28,
    MAX_EVENTS     => 16,
};

# struct epoll_event { uint32_t events; uint64_t data; }: packed (12 bytes)
# on x86, naturally aligned (16 bytes) everywhere else.
my $EVENT = $Config::Config{archname} =~ /^(?:x86_64|i\d86)/ ? 'LQ' : 'Lx4Q';
my $EVENT_SIZE = length pack $EVENT, 0, 0;

# The numbers of epoll_create1, epoll_ctl and epoll_pwait on the
# architectures Debian builds actd for. Elsewhere they come from
# syscall.ph, which costs each child about 2.5 MB (it loads some hundred
# .ph files).
our %NUMBERS = (
    x86_64  => [ 291, 233, 281 ],
    aarch64 => [ 20,  21,  22 ],
);

my ($SYS_create1, $SYS_ctl, $SYS_pwait);

# load_numbers: the syscall numbers of this architecture, or dies naming
# what is missing.
sub load_numbers {
    return if defined $SYS_pwait;
    my ($arch) = $Config::Config{archname} =~ /^([^-]+)/;
    if (my $known = $NUMBERS{$arch // ''}) {
        ($SYS_create1, $SYS_ctl, $SYS_pwait) = @$known;
        return;
    }
    ($SYS_create1, $SYS_ctl, $SYS_pwait) = header_numbers();
}

# header_numbers: the numbers from syscall.ph (Debian: libperl5.xx), or
# dies.
sub header_numbers {
    local $SIG{__WARN__} = sub { };    # h2ph output redefines constants
    eval {
        package main;
        require 'syscall.ph';
        1;
    } or die "actd: epoll for exclusive mode needs syscall.ph (Debian: libperl5): $@";
    return (main::SYS_epoll_create1(), main::SYS_epoll_ctl(), main::SYS_epoll_pwait());
}

# new: a new epoll set (close-on-exec), or dies with the error.
sub new {
    my ($class) = @_;
    load_numbers();
    my $fd = syscall($SYS_create1, EPOLL_CLOEXEC);
    die "actd: epoll_create1: $!\n" if $fd < 0;
    open(my $fh, '<&=', $fd) or die "actd: epoll fd $fd: $!\n";
    return bless { fd => $fd, fh => $fh }, $class;
}

# add: watch $fd for input, exclusively (EPOLLEXCLUSIVE) if $exclusive;
# dies with the error.
sub add {
    my ($self, $fd, $exclusive) = @_;
    my $events = EPOLLIN | ($exclusive ? EPOLLEXCLUSIVE : 0);
    my $event = pack $EVENT, $events, $fd;
    syscall($SYS_ctl, $self->{fd}, EPOLL_CTL_ADD, $fd + 0, $event) == 0
        or die "actd: epoll_ctl add fd $fd: $!\n";
}

# remove: stop watching $fd; dies with the error.
sub remove {
    my ($self, $fd) = @_;
    my $event = pack $EVENT, 0, 0;    # ignored, but non-NULL for old kernels
    syscall($SYS_ctl, $self->{fd}, EPOLL_CTL_DEL, $fd + 0, $event) == 0
        or die "actd: epoll_ctl del fd $fd: $!\n";
}

# wait: the fds that are ready, waiting at most $timeout_ms (-1: for ever).
# Returns an empty list on a timeout or a signal (EINTR); dies on any other
# error.
sub wait {
    my ($self, $timeout_ms) = @_;
    my $events = "\0" x ($EVENT_SIZE * MAX_EVENTS);
    my $n = syscall($SYS_pwait, $self->{fd}, $events, MAX_EVENTS, $timeout_ms + 0, 0, 8);
    if ($n < 0) {
        return () if $! == Errno::EINTR;
        die "actd: epoll_pwait: $!\n";
    }
    return map { (unpack $EVENT, substr $events, $_ * $EVENT_SIZE, $EVENT_SIZE)[1] } 0 .. $n - 1;
}

1;

__END__

=head1 NAME

Actd::Epoll - an epoll set with EPOLLEXCLUSIVE, in core Perl

=head1 SYNOPSIS

  my $ep = Actd::Epoll->new;
  $ep->add(3, 1);          # listener at fd 3, exclusive wake-ups
  $ep->add($channel, 0);
  my @ready = $ep->wait(-1);

=head1 DESCRIPTION

Used by L<Actd::Worker> in actd's exclusive accept mode. The kernel wakes one
of the processes waiting on a listener registered with C<EPOLLEXCLUSIVE>,
the one that registered first: no thundering herd.

=cut
