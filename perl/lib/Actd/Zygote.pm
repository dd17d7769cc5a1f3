package Actd::Zygote;

# The zygote of actd --preload (docs/protocol.md, "Preload: the zygote"), in
# core Perl. actd starts the handler with ACTD_ROLE=zygote once per
# generation; plackup has loaded the application by then. serve says hello
# with the fork capability and forks one child per F order: the child takes
# the back-channel attached to the order (SCM_RIGHTS, read with
# Actd::Passfd, as core Perl has no recvmsg) at ACTD_CHANNEL_FD, its
# slot in ACTD_SLOT, and runs the ordinary worker, sharing the
# application's pages with the zygote copy-on-write. The zygote forks twice:
# the middle process exits at once, so the child is reparented to the
# master (a child subreaper), which waits for it.

use strict;
use warnings;
use Actd::Journal;
use POSIX ();
use Actd::Passfd ();
use Actd::Protocol qw(HEADER WIRE HELLO PONG PING DRAIN FORK CAP_FORK);

# serve: the zygote's loop; $run_child->() runs in each forked child and
# returns when its worker is done. Returns at a drain order or the
# master's end of file. Dies where Actd::Passfd cannot pass descriptors
# (a perl without 64-bit pointers).
sub serve {
    my ($class, $run_child) = @_;
    Actd::Passfd::available() or die "Actd::Zygote: --preload needs a 64-bit perl (Actd::Passfd)\n";
    my $fd = $ENV{ACTD_CHANNEL_FD} // '';
    $fd =~ /\A[0-9]+\z/ or die "Actd::Zygote: ACTD_CHANNEL_FD=\"$fd\": want a number\n";
    open(my $channel, '+<&=', $fd) or die "Actd::Zygote: fd $fd: $!\n";
    local $SIG{INT} = 'IGNORE';    # ^C is the master's: it drains us
    send($channel, pack(HEADER, HELLO, WIRE, CAP_FORK, $$), 0);
    while (1) {
        my ($packet, $passed) = Actd::Passfd::receive_fd($fd, 64);
        return if $packet eq '';
        my ($type, $wire, $slot, $value) = unpack HEADER, $packet;
        if ($type eq FORK && defined $passed) {
            fork_child($fd, $passed, $slot, $run_child);
            next;
        }
        POSIX::close($passed) if defined $passed;
        if ($type eq PING) {
            send($channel, pack(HEADER, PONG, WIRE, 0, $value), 0);
        } elsif ($type eq DRAIN) {
            return;
        } else {
            die "Actd::Zygote: garbage on the back-channel: " . unpack('H*', $packet) . "\n";
        }
    }
}

# fork_child: the child of $slot, through a middle process that exits at once.
sub fork_child {
    my ($zygote_fd, $passed, $slot, $run_child) = @_;
    my $pid = fork // die "Actd::Zygote: fork: $!\n";
    if ($pid) {
        POSIX::close($passed);
        waitpid($pid, 0);
        return;
    }
    my $code = 1;
    eval {
        if (fork // die "Actd::Zygote: fork: $!\n") {
            $code = 0;    # the middle process: the child is reparented to the master
        } else {
            POSIX::dup2($passed, $zygote_fd) // die "Actd::Zygote: dup2: $!\n";
            POSIX::close($passed);
            $ENV{ACTD_SLOT} = $slot;
            delete $ENV{ACTD_ROLE};
            $SIG{$_} = 'DEFAULT' for qw(CHLD TERM INT);
            $run_child->();
            $code = 0;
        }
        1;
    } or Actd::Journal::emit(\*STDERR, Actd::Journal::ERR, $@);
    POSIX::_exit($code);
}

1;
