package Actd::Worker;

# Actd::Worker: the worker side of actd's back-channel protocol
# (docs/protocol.md, revision 6), in core Perl. It finds the listeners and
# the back-channel actd handed this process, says hello, and runs the
# accept loop of the pool's mode, calling back for each connection it
# accepts. The caller serves one connection at a time.
#
#   dispatch:  wait for an A order, accept once, B, serve, I; an order with
#              "keep accepting" also serves the connections waiting behind
#              it (up to 32, for at most 50 ms), counted in one S before
#              the I; one that lasts gets its own B (see lasts).
#   exclusive: after the master's go-ahead (A), register the listeners in
#              an epoll set with EPOLLEXCLUSIVE (Actd::Epoll) and accept by
#              ourselves, in spells (see spell): B, serve the connection
#              and those waiting behind it, I, then one S for the ones
#              after the first; a later A means register again.
#
# Both answer P with O, and end on D or EOF (the master is gone) once the
# connection in hand is done. The master sends A and P to a child it holds
# idle, which may have taken a connection whose B it has not read yet: a
# P or a "register again" that comes while that connection waits for its
# client's next request leaves it open (heard): the P is answered at once,
# the A carried out once the connection ends, after its I (register_owed).
#
# Under an accept filter (revision 3, capability "handoff", announced when
# ACTD_PROTOCOL is 3 or more and Actd::Passfd works on this perl) the
# master accepts and hands a dispatch-mode child each ready connection, its
# fd attached (C): B, serve, I, as after an A. Between two requests the
# caller may give such a connection back (await_handed): K with its fd
# attached, then I; an idle keep-alive client so holds no child.
#
# Children first (revision 4, capability "screen", announced with handoff
# when ACTD_ACCEPT_FILTER is data or http and ACTD_PROTOCOL is 4 or more):
# the dispatch-mode child accepts by itself as in exclusive mode, after the
# master's go-ahead (A), and looks at each connection (Actd::Screen): a
# ready one is served in a spell as in exclusive mode, one not ready goes
# to the master (K with its fd and the value NOT_READY, nothing else). It
# takes C at any time (B, serve, I), and any connection may go back
# between two requests (K).
#
# Write completion (revision 5, capability "offload", announced with
# handoff under a filter when ACTD_PROTOCOL is 5 or more and
# ACTD_OFFLOAD_MAX a number above 0): the caller may hand a connection
# that may go back, with the rest of its response, to the master (finish:
# W, two fds and a trailer), and the child takes back a response the
# master would not hold (U): B, write it (Actd::Unsent), K or close, I.
#
# PROXY protocol (ACTD_PROXY_FROM; capability "proxy", revision 6): a
# connection this child accepts from a trusted peer starts with a PROXY
# header, which it reads (Actd::Proxy::consume) before serving; a
# screening child whose peek shows the header cut short gives the
# connection to the master unread (K, NOT_READY). The client's address
# (address) goes with a K or W as a trailer, and comes with a C or U.
#
# TLS (ACTD_TLS; capability "tls", revision 6): the handler terminates TLS
# on the listeners named there (Actd::TLS); such a connection is never
# given back (K) or handed over with its response (W), and a screening
# child judges it by the TLS rule (a whole ClientHello, Actd::Screen).
#
# Request tallies (revision 6, Actd::Tally): the handler counts each
# answer (tally); the counts go to the master in one T at most once a
# second, when due or while the child waits for the master (await_master,
# and the epoll timeouts), and at the end of run.

use strict;
use warnings;
use Fcntl qw(F_GETFD F_SETFD FD_CLOEXEC);
use Socket qw(MSG_DONTWAIT MSG_PEEK);
use Errno qw(EAGAIN EWOULDBLOCK ECONNABORTED EINTR ECONNRESET);
use Time::HiRes ();
use Actd::Protocol qw(WIRE HEADER HEADER_SIZE MAX_TEXT FIRST_FD KEEP_ACCEPTING HANDOFF SCREEN NOT_READY
    OFFLOAD KEEP_ALIVE TRAILER TRAILER_SIZE PROXY TLS MAX_ADDRESS
    HELLO IDLE BUSY PONG SERVED REQUEST KEEP WRITE ACCEPT PING DRAIN CONNECTION UNSENT);
use Actd::Journal;
use Actd::Screen ();
use Actd::Tally;
use Actd::TLS ();

our $VERSION = '0.1.0';

use constant {
    BATCH          => 32,        # connections under one keep-accepting order, or in one spell
    BATCH_TIME     => 0.05,      # seconds a keep-accepting batch or a spell may run
    PAUSE_MIN      => 0.01,      # after an accept error other than EAGAIN
    PAUSE_MAX      => 1,
    SIOCOUTQ       => 0x5411,    # bytes we sent that the master has not read yet
    REPORT_BACKLOG => 2304,      # three small messages, as the kernel counts them (768 bytes each)
    UNCHECKED      => 2,         # messages sent since an order after which a report checks the backlog
    GIVE_BACK_GRACE => 0.001,    # seconds a handed-over connection may keep its child idle
    HEADER_TIMEOUT  => 5,        # seconds a trusted peer's PROXY header may take (the handler's read timeout)
};

# new: the worker of this process, from the environment actd built
# (ACTD_ACCEPT_MODE, ACTD_PROTOCOL, LISTEN_FDS, ACTD_CHANNEL_FD, and
# ACTD_ACCEPT_FILTER under a filter). Dies with
# a message naming the variable when not run by actd in dispatch or
# exclusive mode. It removes LISTEN_* and ACTD_CHANNEL_FD from %ENV, so
# programs the application runs do not take the sockets for theirs.
sub new {
    my ($class) = @_;
    my $mode = $ENV{ACTD_ACCEPT_MODE} // '';
    $mode =~ /\A(?:dispatch|exclusive)\z/
        or die "actd worker: ACTD_ACCEPT_MODE=\"$mode\": want dispatch or exclusive"
        . " (run under actd: actd --listen ADDR -- plackup -s Actd app.psgi;"
        . " shared mode has no back-channel)\n";
    my $protocol = $ENV{ACTD_PROTOCOL} // '';
    $protocol =~ /\A[0-9]+\z/ && $protocol >= 1
        or die "actd worker: ACTD_PROTOCOL=\"$protocol\": want 1 or more\n";
    my $count = $ENV{LISTEN_FDS} // '';
    $count =~ /\A[0-9]+\z/ && $count >= 1
        or die "actd worker: LISTEN_FDS=\"$count\": want 1 or more\n";
    my $channel_fd = $ENV{ACTD_CHANNEL_FD} // '';
    $channel_fd eq FIRST_FD + $count
        or die "actd worker: ACTD_CHANNEL_FD=\"$channel_fd\": want " . (FIRST_FD + $count) . "\n";
    delete @ENV{qw(LISTEN_FDS LISTEN_PID LISTEN_FDNAMES ACTD_CHANNEL_FD)};
    my $handoff = $protocol >= 3 && handoff_works();
    my $self = bless {
        mode      => $mode,
        protocol  => $protocol + 0,
        listeners => [ map { inherit(FIRST_FD + $_) } 0 .. $count - 1 ],
        channel   => inherit($channel_fd),
        stop      => 0,
        reported  => '',
        sent      => UNCHECKED,    # messages sent since the last order (dispatch mode)
        handoff   => $handoff,
        screen    => $handoff && screen_filter($mode, $protocol),    # the filter whose rule we apply, or false
        offload_max => $handoff ? offload_max($mode, $protocol) : 0,    # the most bytes a W may carry; 0: no W
        proxy_from  => proxy_from(),    # listener index => trusted networks, or undef
        tls         => Actd::TLS::listeners(),    # listener index => the fd of its certificate and key
    }, $class;
    $self->{tally} = Actd::Tally->new($self->{channel}, $self->{protocol});    # undef before revision 6
    return $self;
}

# tally: count an answer, $status after $micros, for the master's metrics
# (Actd::Tally: sent at most once a second, when due or at the end).
sub tally {
    my ($self, $status, $micros) = @_;
    $self->{tally}->add($status, $micros) if $self->{tally};
}

# tally_ms: how long a wait for the master may last before the counts
# are due (epoll_wait's timeout): -1 with none.
sub tally_ms { $_[0]{tally} ? $_[0]{tally}->due_ms : -1 }

# tally_due: send the counts if they are due.
sub tally_due { $_[0]{tally}->send_due if $_[0]{tally} }

# await_master: wait for the master's next message, sending the counts as
# they fall due meanwhile (a child idle after requests sends them within
# a second); returns at once with none counted.
sub await_master {
    my ($self) = @_;
    while ((my $ms = $self->tally_ms) >= 0) {
        if ($ms == 0) {
            $self->tally_due;
            next;
        }
        vec(my $bits = '', fileno $self->{channel}, 1) = 1;
        my $n = select(my $out = $bits, undef, undef, $ms / 1000);
        return if $n > 0;
    }
}

# inherit: a handle on an fd actd passed us, made close-on-exec; dies if
# the fd is not open.
sub inherit {
    my ($fd) = @_;
    open(my $fh, '+<&=', $fd) or die "actd worker: fd $fd: $!\n";
    my $flags = fcntl($fh, F_GETFD, 0) or die "actd worker: fd $fd: $!\n";
    fcntl($fh, F_SETFD, $flags | FD_CLOEXEC) or die "actd worker: fd $fd: $!\n";
    return $fh;
}

# screen_filter: the accept filter a child of $mode under a master of
# revision $protocol applies itself (capability screen): "data" or "http"
# from ACTD_ACCEPT_FILTER in dispatch mode under revision 4 or later; else
# an empty string (no filter, or an older master: the master-first path).
sub screen_filter {
    my ($mode, $protocol) = @_;
    my $filter = $ENV{ACTD_ACCEPT_FILTER} // '';
    return $mode eq 'dispatch' && $protocol >= 4 && $filter =~ /\A(?:data|http)\z/ ? $filter : '';
}

# offload_max: the most bytes of a response the master finishes (W): its
# ACTD_OFFLOAD_MAX under ACTD_ACCEPT_FILTER data or http, in dispatch mode,
# from a master of revision 5 on; else 0 (also for a value that is not a
# number above 0).
sub offload_max {
    my ($mode, $protocol) = @_;
    my $max = $ENV{ACTD_OFFLOAD_MAX} // '';
    return 0 if $mode ne 'dispatch' || $protocol < 5 || ($ENV{ACTD_ACCEPT_FILTER} // '') !~ /\A(?:data|http)\z/;
    return $max =~ /\A[0-9]{1,18}\z/ ? $max + 0 : 0;
}

# proxy_from: ACTD_PROXY_FROM as listener index => trusted networks
# (Actd::Proxy::listener_networks), or undef when it is absent or empty.
sub proxy_from {
    my $spec = $ENV{ACTD_PROXY_FROM} // '';
    return undef if $spec !~ /\S/;
    require Actd::Proxy;
    return Actd::Proxy::listener_networks($spec);
}

# proxy: whether this child announces "proxy": ACTD_PROXY_FROM is set and
# the master speaks revision 6 or later (address trailers).
sub proxy { $_[0]{proxy_from} && $_[0]{protocol} >= 6 }

# tls: the fd of listener $index's certificate and key (ACTD_TLS), or
# undef if the listener is no TLS one; with no $index, the hash of them.
sub tls { @_ > 1 ? $_[0]{tls}{ $_[1] } : $_[0]{tls} }

# announces_tls: whether this child announces "tls": ACTD_TLS is set and
# the master speaks revision 6 or later.
sub announces_tls { %{ $_[0]{tls} } && $_[0]{protocol} >= 6 }

# may_park: listener $index if its connections may go back to the master
# (K, W), else undef: a TLS listener's never do.
sub may_park {
    my ($self, $index) = @_;
    return defined $self->{tls}{$index} ? undef : $index;
}

# address: the client's address ("HOST:PORT") of the connection in hand
# when a PROXY header (ours, or the master's, by a trailer) gave it; undef
# when the socket's peer is the client.
sub address { $_[0]{address} }

# trusted: whether the peer $peer (a packed address) of a connection on
# listener $index must send a PROXY header (ACTD_PROXY_FROM).
sub trusted {
    my ($self, $index, $peer) = @_;
    my $nets = $self->{proxy_from} && $self->{proxy_from}{$index} or return 0;
    return 0 if !defined $peer || length $peer < 2;
    require Socket;
    my $family = Socket::sockaddr_family($peer);
    my $ip = $family == Socket::AF_INET() ? Socket::inet_ntop($family, (Socket::unpack_sockaddr_in($peer))[1])
        : $family == Socket::AF_INET6() ? Socket::inet_ntop($family, (Socket::unpack_sockaddr_in6($peer))[1]) : undef;
    return Actd::Proxy::contains($nets, $ip);
}

# admit: read the PROXY header of connection $conn from listener $index,
# peer $peer, if its peer is trusted, waiting HEADER_TIMEOUT for it (0
# with $screening: peek once). Returns (1, address): serve it (address
# undef: the peer is the client); (0): not whole yet, nothing read (only
# when screening); (-1): close it without an answer.
sub admit {
    my ($self, $conn, $index, $peer, $screening) = @_;
    return (1, undef) if !$self->trusted($index, $peer);
    my ($state, $address) = Actd::Proxy::consume($conn, $screening ? 0 : HEADER_TIMEOUT);
    return (1, $address) if $state == Actd::Proxy::COMPLETE();
    return $state == Actd::Proxy::INCOMPLETE() ? (0) : (-1);
}

# trailer: the address trailer for a K or W of the connection in hand
# (address), or '' when there is none or the master does not read one.
sub trailer {
    my ($self, $address) = @_;
    return '' if !defined $address || !$self->proxy;
    return length $address <= MAX_ADDRESS ? $address : '';
}

# handoff_works: whether this perl can take file descriptors (Actd::Passfd).
sub handoff_works {
    require Actd::Passfd;
    return Actd::Passfd::available();
}

# mode: "dispatch" or "exclusive".
sub mode { $_[0]{mode} }

# listener: the handle of listening socket $index (fd 3 + $index), or undef.
sub listener { $_[0]{listeners}[ $_[1] ] }

# channel: the back-channel's handle, to watch for readability while
# waiting on a client (then ask heard what to do).
sub channel { $_[0]{channel} }

# heard: read what the master said to a busy child, its back-channel
# readable, while the connection in hand waits for the client's next
# request. Returns true if it was heard and the connection goes on: a
# ping (P, answered with O), or, in a child that registers its listeners
# (exclusive mode, a screening child), a "register again" (A), which the
# master sends a child it has not heard busy yet: it is owed, carried out
# once the connection ends (register_owed). Returns false, the message
# left unread for the loop, for anything else: a drain, end of file, or
# an order the connection must end for.
sub heard {
    my ($self) = @_;
    my $peeked = recv($self->{channel}, my $packet, HEADER_SIZE, MSG_PEEK | MSG_DONTWAIT);
    return 0 if !defined $peeked || length $packet < HEADER_SIZE;
    my ($type) = unpack HEADER, $packet;
    return 0 if $type ne PING && !($type eq ACCEPT && $self->registers);
    my (undef, undef, $value) = $self->receive or return 0;
    if ($type eq ACCEPT) {
        $self->{owed} = 1;
    } else {
        $self->send_message(PONG, 0, $value);
    }
    return 1;
}

# registers: whether this child registers its listeners on the master's
# A (exclusive mode, or a screening child), so that a later A means
# "register again"; in dispatch mode an A is an accept order.
sub registers { $_[0]{mode} eq 'exclusive' || $_[0]{screen} }

# stop: ask the loop to end after the connection in hand (psgix.harakiri).
sub stop { $_[0]{stop} = 1 }

# send_message: one message to the master. A failed send (the master is
# gone) is ignored: the next receive reads end of file.
sub send_message {
    my ($self, $type, $listener, $value) = @_;
    $self->{reported} = '' if $type eq BUSY || $type eq IDLE;    # a B or I ends what R said
    $self->{sent}++;
    send($self->{channel}, pack(HEADER, $type, WIRE, $listener // 0, $value // 0), 0);
}

# report: tell the master which request is in hand (R, protocol revision
# 2), shown by `actd status` and in the busy-timeout log line; an empty
# text clears it (between the requests of a connection). Does nothing
# under a revision-1 master, and for a connection the master was not told
# of by its own B (one after the first of a spell or a keep-accepting
# batch, unless it lasts): R comes only after the B it belongs to. Bytes outside printable ASCII become "?", so
# the text is valid UTF-8 whatever the client sent; it is cut to 248 bytes.
#
# A report is best effort and never waits: it is left out when it repeats
# the last one since B (the status already shows it), or when the master
# has not read REPORT_BACKLOG of our messages yet. A dispatch-mode master
# reads a busy child's messages only when it needs them (at the latest at
# its next tick), so a child that reported every request of a fast
# keep-alive connection would fill its back-channel and then wait in send.
# The backlog is asked for (SIOCOUTQ) only from the UNCHECKED-th message
# after an order: a dispatch-mode master orders only a child whose I it
# has read, so before that the channel holds at most the few messages we
# sent since (and a pong).
sub report {
    my ($self, $text) = @_;
    return if $self->{protocol} < 2 || $self->{quiet} || defined $self->{unannounced};
    $text =~ s/[^\x20-\x7e]/?/g;
    $text = substr $text, 0, MAX_TEXT;
    return if $text eq $self->{reported};
    if ($self->{sent} >= UNCHECKED) {
        my $queued = pack 'i', 0;
        return if !ioctl($self->{channel}, SIOCOUTQ, $queued) || unpack('i', $queued) >= REPORT_BACKLOG;
    }
    $self->{reported} = $text;
    $self->{sent}++;
    send($self->{channel}, pack(HEADER, REQUEST, WIRE, 0, 0) . $text, MSG_DONTWAIT);
}

# receive: the master's next message as (type, listener, value, conn,
# unsent), or an empty list at end of file; conn is the connection a C or
# U carries (a handle), else undef; unsent, for a U, is { data => a
# handle, offset, length }. Dies on a packet that is not a wire-1 message,
# on a C without its file descriptor, a U without its two and its
# trailer, and another message with one.
sub receive {
    my ($self) = @_;
    return $self->receive_handoff if $self->{handoff};
    my $packet;
    while (1) {
        last if defined recv($self->{channel}, $packet, 256, 0);
        next if $! == EINTR;
        return () if $! == ECONNRESET;
        die "actd worker: back-channel: $!\n";
    }
    return () if $packet eq '';
    my ($type, $wire, $listener, $value) = unpack HEADER, $packet;
    length($packet) == HEADER_SIZE && $wire == WIRE
        or die "actd worker: garbage on the back-channel: " . unpack('H*', $packet) . "\n";
    return ($type, $listener, $value);
}

# receive_handoff: receive, with recvmsg for the fds a C or U carries.
sub receive_handoff {
    my ($self) = @_;
    my ($packet, @fds) = Actd::Passfd::receive_fds(fileno $self->{channel}, 256);
    my @handles = map { open(my $fh, '+<&=', $_) or die "actd worker: fd $_: $!\n"; $fh } @fds;
    return () if $packet eq '';
    my ($type, $wire, $listener, $value) = unpack HEADER, $packet;
    my ($size, $count) = $type eq UNSENT ? (HEADER_SIZE + TRAILER_SIZE, 2) : (HEADER_SIZE, $type eq CONNECTION ? 1 : 0);
    my $address = $count && $self->proxy && length $packet > $size ? substr($packet, $size) : '';    # revision 6: C's and U's address trailer
    length($packet) == $size + length($address) && $wire == WIRE && @fds == $count
        && length $address <= MAX_ADDRESS && ($address eq '' || Actd::Proxy::split_address($address))
        or die "actd worker: garbage on the back-channel: " . unpack('H*', $packet)
        . (@fds ? " with " . @fds . " fds" : '') . "\n";
    $address = undef if $address eq '';
    return ($type, $listener, $value, $handles[0], { address => $address }) if $type eq CONNECTION;
    return ($type, $listener, $value) if $type ne UNSENT;
    my ($offset, $length) = unpack TRAILER, substr $packet, HEADER_SIZE;
    return ($type, $listener, $value, $handles[0],
        { data => $handles[1], offset => $offset, length => $length, address => $address });
}

# run: say hello, then accept and call $serve->($conn, $peer, $listener)
# for each connection (the peer's packed address; $serve closes nothing,
# run closes $conn after it) until a drain, end of file or stop.
sub run {
    my ($self, $serve) = @_;
    $self->{serve} = $serve;
    $self->send_message(HELLO, ($self->{handoff} ? HANDOFF : 0) | ($self->{screen} ? SCREEN : 0)
        | ($self->{offload_max} ? OFFLOAD : 0) | ($self->proxy ? PROXY : 0) | ($self->announces_tls ? TLS : 0), $$);
    $self->send_message(IDLE);
    my $end = $self->{screen} ? $self->screen : $self->{mode} eq 'exclusive' ? $self->exclusive : $self->dispatch;
    $self->{tally}->flush if $self->{tally};    # what was counted and not sent
    return $end;
}

# answer: handle a message every mode takes the same way. Returns true
# for a ping (answered), false for a drain; dies on anything else.
sub answer {
    my ($self, $type, $value) = @_;
    if ($type eq PING) {
        $self->send_message(PONG, 0, $value);
        return 1;
    }
    return 0 if $type eq DRAIN;
    die "actd worker: unexpected message \"$type\" from the master\n";
}

# dispatch: carry out the master's orders until a drain, end of file or
# stop.
sub dispatch {
    my ($self) = @_;
    while (!$self->{stop}) {
        $self->await_master;
        my ($type, $listener, $value, $conn, $unsent) = $self->receive or return;
        if ($type eq UNSENT && $self->{offload_max}) {
            $self->{sent} = 0;
            $self->unsent($listener, $value, $conn, $unsent);
        } elsif ($type eq ACCEPT) {
            $self->{sent} = 0;    # the master read our I before it ordered: the channel is empty
            $self->order($listener, $value);
        } elsif ($type eq CONNECTION) {
            $self->{sent} = 0;
            $self->handed($listener, $conn, $unsent->{address});
        } else {
            $self->answer($type, $value) or return;
        }
    }
}

# order: one dispatch-mode accept order: the connection, and with keep
# accepting the ones waiting behind it, until the batch is full, has run
# BATCH_TIME, or the master has spoken (a drain); then I.
sub order {
    my ($self, $index, $value) = @_;
    my $listener = $self->{listeners}[$index]
        // die "actd worker: accept order for listener $index of " . @{ $self->{listeners} } . "\n";
    my $end = Time::HiRes::time() + BATCH_TIME;
    $self->take($index, $listener) && $value == KEEP_ACCEPTING
        and $self->keep_accepting($index, $listener, $end);
    $self->send_message(IDLE);
}

# keep_accepting: the connections waiting on the listener after an order's
# first one, up to BATCH in all and until $end. The child stays busy
# meanwhile (the first one's B), so each is announced only if it lasts
# (lasts); the others are counted in one S, sent before the caller's I.
sub keep_accepting {
    my ($self, $index, $listener, $end) = @_;
    local $self->{pending} = 0;
    for (2 .. BATCH) {
        last if $self->{stop} || Time::HiRes::time() > $end || $self->spoken;
        my ($conn, $peer) = $self->accept_one($listener) or last;
        my ($admitted, $address) = $self->admit($conn, $index, $peer);
        if ($admitted <= 0) {
            close $conn;
            next;
        }
        local $self->{unannounced} = $index;
        $self->serve($conn, $peer, $index, $address);
        $self->{pending}++ if defined $self->{unannounced};
    }
    $self->send_message(SERVED, 0, $self->{pending}) if $self->{pending};
}

# lasts: the handler's word that the connection in hand will last (it is
# about to wait for the client's next request). A connection of a
# keep-accepting batch not announced yet gets its B now, after an S for
# the short ones before it, as the protocol asks for one that lasts; for
# any other connection it does nothing.
sub lasts {
    my ($self) = @_;
    my $index = delete $self->{unannounced} // return;
    $self->send_message(SERVED, 0, $self->{pending}) if $self->{pending};
    $self->{pending} = 0;
    $self->send_message(BUSY, $index);
}

# handed: serve a connection the master handed over (C) after B, as one
# accepted; it goes back (K) if the callback asked so (await_handed); then I.
sub handed {
    my ($self, $index, $conn, $address) = @_;
    $index < @{ $self->{listeners} }
        or die "actd worker: connection from listener $index of " . @{ $self->{listeners} } . "\n";
    $self->send_message(BUSY, $index);
    local $self->{parkable} = $self->may_park($index);
    $self->serve($conn, getpeername($conn), $index, $address);
    $self->send_message(IDLE);
}

# unsent: write what a U brought, a response the master did not take
# (beyond its --offload-total), to its connection $conn from listener
# $index: B, the data's range written blocking (Actd::Unsent), then the
# connection back (K) if $value has KEEP_ALIVE and all went, else closed;
# then I. Nothing of the next request is read.
sub unsent {
    my ($self, $index, $value, $conn, $unsent) = @_;
    $index < @{ $self->{listeners} }
        or die "actd worker: unsent response from listener $index of " . @{ $self->{listeners} } . "\n";
    require Actd::Unsent;
    $self->send_message(BUSY, $index);
    my $ok = Actd::Unsent::write_range($conn, $unsent->{data}, $unsent->{offset}, $unsent->{length});
    close $unsent->{data};
    $self->keep($conn, $index, 0, $unsent->{address}) if $ok && $value & KEEP_ALIVE;
    close $conn;
    $self->send_message(IDLE);
}

# offloads: the most bytes of the rest of a response on the connection in
# hand the master would finish (finish): 0 if it would not (no offload
# capability, a connection that may not go back, or one gone already).
sub offloads {
    my ($self) = @_;
    return 0 if !defined $self->{parkable} || $self->{finished};
    return $self->{offload_max};
}

# finish: hand the connection in hand, $conn, to the master with the rest
# of its response: $length bytes of file $data (a handle, still the
# caller's to close) from $offset (W); the master parks the connection
# once sent if $keep_alive, else closes it. Nothing of the next request
# may have been read. Returns true if sent: the caller then writes and
# reads $conn no more, and it is not given back (K); false if the master
# would not take it (offloads) or is gone.
sub finish {
    my ($self, $conn, $data, $offset, $length, $keep_alive) = @_;
    return 0 if $length > $self->offloads || $offset < 0 || $length < 0;
    my $message = pack(HEADER, WRITE, WIRE, $self->{parkable}, $keep_alive ? KEEP_ALIVE : 0)
        . pack(TRAILER, $offset, $length) . $self->trailer($self->{address});
    $self->{sent}++;
    Actd::Passfd::send_fds(fileno $self->{channel}, $message, fileno $conn, fileno $data) or return 0;
    $self->{finished}  = 1;
    $self->{give_back} = 0;
    return 1;
}

# await_handed: for a connection handed over, or one a screening child
# accepted itself, called between two of its requests with nothing of the
# next one read: wait GIVE_BACK_GRACE for the next request. Returns true if
# the client sent something; else false, and the connection goes back to
# the master (K) when the callback returns. Returns undef for any other
# connection (no filter, or a master-first child's own): the caller then
# waits as usual.
sub await_handed {
    my ($self, $conn) = @_;
    return undef if !defined $self->{parkable};
    my $bits = '';
    vec($bits, fileno $conn, 1) = 1;
    my $n;
    do { $n = select(my $out = $bits, undef, undef, GIVE_BACK_GRACE) } while $n < 0 && $! == EINTR;
    return 1 if $n > 0;
    $self->{give_back} = 1;
    return 0;
}

# parkable: whether the connection being served may go back to the master
# (K): one handed over (C), or one a screening child accepted itself. Such
# a connection is read exactly (Actd::Exact).
sub parkable { defined $_[0]{parkable} }

# give_back: give the connection being served back to the master (K) when
# the callback returns; for a parkable one with nothing of its next
# request read.
sub give_back {
    my ($self) = @_;
    $self->{give_back} = 1 if defined $self->{parkable};
}

# spoken: whether the master has sent something not read yet (during a
# keep-accepting batch only a drain or end of file can come).
sub spoken {
    my ($self) = @_;
    my $bits = '';
    vec($bits, fileno $self->{channel}, 1) = 1;
    return select($bits, undef, undef, 0) > 0;
}

# take: accept one connection on the listener and serve it after B.
# Returns false if there was none (another child was faster).
sub take {
    my ($self, $index, $listener) = @_;
    my ($conn, $peer) = $self->accept_one($listener) or return 0;
    my ($admitted, $address) = $self->admit($conn, $index, $peer);
    if ($admitted <= 0) {    # a bad PROXY header, or none in time: closed unanswered
        close $conn;
        return 1;
    }
    $self->send_message(BUSY, $index);
    $self->serve($conn, $peer, $index, $address);
    return 1;
}

# serve: the callback, with its errors logged rather than fatal: one
# connection must not end the child. $address is the client's when a
# PROXY header gave it (address).
sub serve {
    my ($self, $conn, $peer, $index, $address) = @_;
    local $self->{finished} = 0;
    local $self->{address}  = $address;
    my $ok = eval { $self->{serve}->($conn, $peer, $index); 1 }
        or Actd::Journal::emit(\*STDERR, Actd::Journal::ERR, "actd worker: connection failed: $@");
    if (delete $self->{give_back} && $ok && !$self->{finished}) {
        $self->{reported} = '';
        $self->keep($conn, $index);
    }
    close $conn;
}

# keep: give connection $conn, from listener $index, to the master (K with
# its fd attached): $value NOT_READY for one screened and found not ready,
# else (0) one between two requests; with the client's $address as a
# trailer (default: the connection in hand's, address) if a PROXY header
# gave one. The caller closes its copy. A failed send (the master is gone)
# is ignored: the next receive reads end of file.
sub keep {
    my ($self, $conn, $index, $value, $address) = @_;
    $address //= $self->{address};
    $self->{sent}++;
    Actd::Passfd::send_fd(fileno $self->{channel},
        pack(HEADER, KEEP, WIRE, $index, $value // 0) . $self->trailer($address), fileno $conn);
}

# accept_one: a connection and its peer address, or an empty list if none
# was waiting. Out of fds or memory, it pauses (10 ms, doubling up to 1 s)
# and returns none: the connection stays queued for later.
sub accept_one {
    my ($self, $listener) = @_;
    while (1) {
        my $peer = accept(my $conn, $listener);
        if ($peer) {
            $self->{pause} = 0;
            return ($conn, $peer);
        }
        next if $! == EINTR;
        return () if $! == EAGAIN || $! == EWOULDBLOCK || $! == ECONNABORTED;
        Actd::Journal::emit(\*STDERR, Actd::Journal::ERR, "actd worker: accept: $!");
        $self->{pause} = $self->{pause} ? $self->{pause} * 2 : PAUSE_MIN;
        $self->{pause} = PAUSE_MAX if $self->{pause} > PAUSE_MAX;
        Time::HiRes::sleep($self->{pause});
        return ();
    }
}

# exclusive: wait for the go-ahead, register, then accept by ourselves
# until a drain, end of file or stop.
sub exclusive {
    my ($self) = @_;
    $self->go_ahead or return;
    require Actd::Epoll;
    my $epoll = Actd::Epoll->new;
    $epoll->add(fileno $self->{channel}, 0);
    $self->register($epoll);
    my %index = map { fileno($self->{listeners}[$_]) => $_ } 0 .. $#{ $self->{listeners} };
    my $channel = fileno $self->{channel};
    while (!$self->{stop}) {
        my @ready = $epoll->wait($self->tally_ms);
        $self->tally_due;
        if (grep { $_ == $channel } @ready) {    # orders first: a drain wins over a connection
            $self->exclusive_order($epoll) or return;
        }
        for my $fd (grep { exists $index{$_} } @ready) {
            $self->spell($index{$fd});
            last if $self->{stop};
        }
        $self->register_owed($epoll);
    }
}

# go_ahead: wait for the master's first A, answering pings. Returns false
# on a drain or end of file.
sub go_ahead {
    my ($self) = @_;
    while (1) {
        my ($type, undef, $value) = $self->receive or return 0;
        return 1 if $type eq ACCEPT;
        $self->answer($type, $value) or return 0;
    }
}

# exclusive_order: one message to a registered child. A: register again,
# to the back of the kernel's wait queue (a lower slot registered after
# us). Returns false on a drain or end of file.
sub exclusive_order {
    my ($self, $epoll) = @_;
    my ($type, undef, $value) = $self->receive or return 0;
    return $self->answer($type, $value) if $type ne ACCEPT;
    $self->register($epoll);
    return 1;
}

# register: add every listener, in listener order, with EPOLLEXCLUSIVE,
# after removing them if they were registered already (such an entry
# cannot be moved, only added anew, to the back of the wait queue); then
# I, the master's sign that it is done.
sub register {
    my ($self, $epoll) = @_;
    if ($self->{registered}++) {
        $epoll->remove(fileno $_) for @{ $self->{listeners} };
    }
    $epoll->add(fileno $_, 1) for @{ $self->{listeners} };
    $self->send_message(IDLE);
}

# register_owed: register again if an A came while a connection waited
# for its client (heard), now that it ended: after its I, so the master
# sees I for the connection, then I once registered again, as when the A
# comes after the connection. Not when the child stops.
sub register_owed {
    my ($self, $epoll) = @_;
    $self->register($epoll) if delete $self->{owed} && !$self->{stop};
}

# screen: children first under an accept filter (capability screen). The
# child is idle to the master from its first I and takes a connection
# handed over (C) at any time; after the go-ahead (A) it also accepts by
# itself from the listeners, registered as in exclusive mode, and screens
# what it accepts (spell). Runs until a drain, end of file or stop.
sub screen {
    my ($self) = @_;
    require Actd::Epoll;
    require Actd::Screen;
    my $epoll   = Actd::Epoll->new;
    my $channel = fileno $self->{channel};
    $epoll->add($channel, 0);
    my %index = map { fileno($self->{listeners}[$_]) => $_ } 0 .. $#{ $self->{listeners} };
    while (!$self->{stop}) {
        my @ready = $epoll->wait($self->tally_ms);
        $self->tally_due;
        if (grep { $_ == $channel } @ready) {    # orders first: a drain wins over a connection
            $self->screen_order($epoll) or return;
        }
        for my $fd (grep { exists $index{$_} } @ready) {
            last if $self->{stop};
            $self->spell($index{$fd});
        }
        $self->register_owed($epoll);
    }
}

# screen_order: one message to a screening child. C: serve the connection
# (handed). A: register the listeners (the first), or register them again
# (the later ones), then I. Returns false on a drain or end of file.
sub screen_order {
    my ($self, $epoll) = @_;
    my ($type, $listener, $value, $conn, $unsent) = $self->receive or return 0;
    if ($type eq CONNECTION) {
        $self->handed($listener, $conn, $unsent->{address});
        return 1;
    }
    if ($type eq UNSENT && $self->{offload_max}) {
        $self->unsent($listener, $value, $conn, $unsent);
        return 1;
    }
    return $self->answer($type, $value) if $type ne ACCEPT;
    $self->register($epoll);
    return 1;
}

# spell: a busy spell of a child that accepts by itself (exclusive mode,
# or a screening child): B for the first connection ready on listener
# $index, then, without waiting for events, each connection waiting behind
# it, until none is waiting, BATCH connections were taken or the spell has
# run BATCH_TIME; then I, and one S counting the connections served after
# the first. So a child that saturates costs the master three messages per
# spell instead of two or three per connection; an idle one, B and I (and
# R) per connection, as before. The child is busy to the master from the
# first connection to the last: a long request is covered by the B, at
# any point of the spell, without a timer (core Perl has no timer thread,
# and a SIGALRM would cut the application's sleep and select short). The
# first connection reports its requests (R); the later ones do not
# (quiet): the first one's text is cleared once a second one is taken.
# Does nothing if no connection is ready.
sub spell {
    my ($self, $index) = @_;
    my ($conn, $peer, $address) = $self->ready_one($index) or return;
    return if !$conn;
    my $end = Time::HiRes::time() + BATCH_TIME;
    $self->send_message(BUSY, $index);
    $self->own($conn, $peer, $index, $address);
    local $self->{quiet} = 0;
    my $served = 0;
    for (2 .. BATCH) {
        last if $self->{stop} || Time::HiRes::time() > $end;
        ($conn, $peer, $address) = $self->ready_one($index) or last;
        next if !$conn;
        if (!$self->{quiet}) {
            $self->report('');    # the first one's text is not this one's
            $self->{quiet} = 1;
        }
        $self->own($conn, $peer, $index, $address);
        $served++;
    }
    $self->send_message(IDLE);
    $self->send_message(SERVED, $index, $served) if $served;
}

# ready_one: a connection accepted on listener $index and ready to serve,
# with its peer's address and the client's from a PROXY header (or
# undef); (undef) for one accepted but not to serve here (a screening
# child found it not ready, its PROXY header or its request, and gave it
# to the master, K with the value NOT_READY and the address once a header
# was read (the header's, or after LOCAL and UNKNOWN the peer's), or closed it:
# its client gone, or a bad PROXY header); an empty list when none was
# waiting.
sub ready_one {
    my ($self, $index) = @_;
    my ($conn, $peer) = $self->accept_one($self->{listeners}[$index]) or return ();
    my ($admitted, $address) = $self->admit($conn, $index, $peer, $self->{screen});
    my $filter = defined $self->{tls}{$index} ? 'tls' : $self->{screen};
    my $state = $admitted < 0 ? Actd::Screen::GONE() : !$admitted ? Actd::Screen::NOT_READY()
        : !$self->{screen} ? Actd::Screen::READY() : Actd::Screen::look($filter, $conn);
    return ($conn, $peer, $address) if $state == Actd::Screen::READY();
    if ($state == Actd::Screen::NOT_READY()) {
        # A header read (LOCAL, UNKNOWN: no address of its own) goes back
        # with the socket's peer, so that the master does not wait for one.
        $address //= Actd::Proxy::peer_address($peer) if $admitted > 0 && $self->trusted($index, $peer);
        $self->keep($conn, $index, NOT_READY, $address);
    }
    close $conn;
    return (undef);
}

# own: serve a connection this child accepted; a screening child may give
# it back between two requests (await_handed).
sub own {
    my ($self, $conn, $peer, $index, $address) = @_;
    local $self->{parkable} = $self->{screen} ? $self->may_park($index) : undef;
    $self->serve($conn, $peer, $index, $address);
}

1;

__END__

=head1 NAME

Actd::Worker - the worker side of actd's back-channel protocol

=head1 SYNOPSIS

  my $worker = Actd::Worker->new;    # dies unless run by actd
  $worker->run(sub {
      my ($conn, $peer, $listener) = @_;
      $worker->report("GET /");      # what `actd status` shows
      ...                            # serve the connection
      $worker->lasts;                # before waiting for the client's next request
  });

=head1 DESCRIPTION

See docs/protocol.md in the actd repository. L<Plack::Handler::Actd> is
built on it.

=cut
