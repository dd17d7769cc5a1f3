#!/usr/bin/perl
# offload.t: write completion in the worker (docs/protocol.md, "Write
# completion"), with a socketpair playing the master: a response the client
# does not read goes to the master as W (header, trailer, the connection and
# the data attached), from an array body (a memory file) and a file body
# (the file itself); a U is written to its connection, then K and I.
#
#   prove -Iperl/lib perl/t/offload.t
use strict;
use warnings;
use Test::More;
use Socket qw(AF_UNIX SOCK_STREAM SOCK_SEQPACKET SOL_SOCKET SO_SNDBUF PF_UNSPEC);
use File::Temp ();
use Actd::Protocol qw(HEADER HEADER_SIZE TRAILER TRAILER_SIZE WIRE WRITE UNSENT BUSY IDLE KEEP KEEP_ALIVE);
use Actd::Passfd;
use Actd::Offload;
use Actd::Worker;

plan skip_all => 'passing file descriptors needs a 64-bit perl' if !Actd::Passfd::available();

my $size = 1 << 20;
my $body = pack 'C*', map { ($_ * 131) & 0xff } 0 .. $size - 1;

# worker: an Actd::Worker on one end of a SOCK_SEQPACKET pair, serving a
# connection from listener 2 that may go to the master; returns it and the
# master's end.
sub worker {
    socketpair(my $master, my $child, AF_UNIX, SOCK_SEQPACKET, PF_UNSPEC) or die "socketpair: $!";
    my $w = bless { channel => $child, handoff => 1, offload_max => 4 << 20, parkable => 2,
        listeners => [ undef, undef, undef ], sent => 0, reported => '' }, 'Actd::Worker';
    return ($w, $master);
}

# client: a connected stream pair with a small send buffer on the server's
# end, so that a 1 MiB response blocks while the client does not read.
sub client {
    socketpair(my $conn, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
    setsockopt($conn, SOL_SOCKET, SO_SNDBUF, 16384) or die "SO_SNDBUF: $!";
    return ($conn, $client);
}

# drain: everything $client can read until end of file.
sub drain {
    my ($client) = @_;
    my $got = '';
    1 while sysread($client, $got, 65536, length $got);
    return $got;
}

# take_write: the W the master's end received: header fields, trailer,
# and the two fds as handles.
sub take_write {
    my ($master) = @_;
    my ($packet, @fds) = Actd::Passfd::receive_fds(fileno $master, 256);
    my @h = map { open(my $fh, '+<&=', $_) or die "fd $_: $!"; $fh } @fds;
    my ($type, $wire, $listener, $value) = unpack HEADER, $packet;
    my ($offset, $length) = unpack TRAILER, substr $packet, HEADER_SIZE;
    return { size => length $packet, type => $type, wire => $wire, listener => $listener, value => $value,
        offset => $offset, length => $length, fds => \@h };
}

# send_rest: write $rest to handle $fh in a process of its own (as the
# master does, while the test reads), then close it here.
sub send_rest {
    my ($fh, $rest) = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        syswrite($fh, $rest) == length $rest or die "write: $!";
        require POSIX;
        POSIX::_exit(0);
    }
    close $fh;
    return $pid;
}

# read_range: $length bytes of $fh from $offset.
sub read_range {
    my ($fh, $offset, $length) = @_;
    sysseek($fh, $offset, 0) or die "seek: $!";
    my $got = '';
    while (length $got < $length) {
        my $n = sysread($fh, $got, $length - length $got, length $got) or last;
    }
    return $got;
}

subtest 'array body: the rest in a memory file' => sub {
    my ($w, $master) = worker();
    my ($conn, $client) = client();
    my $result = Actd::Offload::send_last($conn, \$body, 0, 5, sub {
        my ($at) = @_;
        my $fh = Actd::Offload::memory_file(\$body, $at) or die "memory file: $!";
        my $ok = $w->finish($conn, $fh, 0, length($body) - $at, 1);
        close $fh;
        return $ok;
    });
    is $result, Actd::Offload::TAKEN, 'the finisher took the rest';
    ok $w->{finished}, 'the worker counts the connection as finished';
    is $w->offloads, 0, 'and offers nothing more for it';
    my $m = take_write($master);
    is_deeply [ @$m{qw(size type wire listener value offset)} ], [ HEADER_SIZE + TRAILER_SIZE, WRITE, WIRE, 2, KEEP_ALIVE, 0 ],
        'W: header and trailer';
    is scalar @{ $m->{fds} }, 2, 'two fds attached';
    my $rest = read_range($m->{fds}[1], $m->{offset}, $m->{length});
    is length $rest, $m->{length}, 'the data holds length bytes';
    close $conn;
    my $pid = send_rest($m->{fds}[0], $rest);    # the master sends the rest
    my $got = drain($client);
    waitpid $pid, 0;
    ok $got eq $body, 'what went and what the master sends are the body' or diag length $got;
};

subtest 'file body: the file itself' => sub {
    my ($w, $master) = worker();
    my ($conn, $client) = client();
    my $file = File::Temp->new;
    binmode $file;
    print {$file} "skip" . $body;
    $file->flush;
    open(my $fh, '<', $file->filename) or die;
    my $result = Actd::Offload::send_file_last($conn, $fh, 4, length $body, 5, sub {
        my ($offset, $left) = @_;
        return $w->finish($conn, $fh, $offset, $left, 0);
    });
    is $result, Actd::Offload::TAKEN, 'the finisher took the rest';
    my $m = take_write($master);
    is_deeply [ @$m{qw(type listener value)} ], [ WRITE, 2, 0 ], 'W: closes after (no keep-alive)';
    ok $m->{offset} > 4 && $m->{offset} + $m->{length} == 4 + length $body, 'the range is what is left of the file';
    my $rest = read_range($m->{fds}[1], $m->{offset}, $m->{length});
    close $conn;
    my $pid = send_rest($m->{fds}[0], $rest);
    ok drain($client) eq $body, 'what went and the file range are the body';
    waitpid $pid, 0;
};

subtest 'beyond the limit: the child writes it' => sub {
    my ($w, $master) = worker();
    $w->{offload_max} = 1000;
    my $fh = Actd::Offload::memory_file(\$body, 0);
    ok !$w->finish(\*STDOUT, $fh, 0, 1001, 1), 'no W for more than ACTD_OFFLOAD_MAX';
    $w->{parkable} = undef;
    ok !$w->finish(\*STDOUT, $fh, 0, 10, 1), 'no W for a connection that may not go back';
    is $w->offloads, 0, 'offloads is 0 for it';
};

subtest 'U: written, then K and I' => sub {
    my ($w, $master) = worker();
    socketpair(my $conn, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die;
    my $data = Actd::Offload::memory_file(\$body, 0) or die;
    my $u = pack(HEADER, UNSENT, WIRE, 1, KEEP_ALIVE) . pack(TRAILER, 100, 5000);
    Actd::Passfd::send_fds(fileno $master, $u, fileno $conn, fileno $data) or die "sendmsg: $!";
    close $conn;
    close $data;
    my ($type, $listener, $value, $got_conn, $unsent) = $w->receive;
    is_deeply [ $type, $listener, $value, @$unsent{qw(offset length)} ], [ UNSENT, 1, KEEP_ALIVE, 100, 5000 ], 'U received';
    $w->unsent($listener, $value, $got_conn, $unsent);
    my @got;
    for (1 .. 3) {
        my ($packet, @fds) = Actd::Passfd::receive_fds(fileno $master, 256);
        push @got, substr($packet, 0, 1) . scalar @fds;
    }
    is_deeply \@got, [ BUSY . 0, KEEP . 1, IDLE . 0 ], 'B, K with the connection, I';
    sysread $client, my $text, 10000;
    is $text, substr($body, 100, 5000), 'the range written to the connection';
};

subtest 'U without its trailer is garbage' => sub {
    my ($w, $master) = worker();
    socketpair(my $conn, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die;
    Actd::Passfd::send_fds(fileno $master, pack(HEADER, UNSENT, WIRE, 0, 0), fileno $conn, fileno $conn) or die;
    ok !eval { $w->receive; 1 }, 'dies';
    like $@, qr/garbage/, 'naming garbage';
};

done_testing;
