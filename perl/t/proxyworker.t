#!/usr/bin/perl
# proxyworker.t: the PROXY protocol in Actd::Worker (docs/perl.md, "PROXY
# protocol"), a socketpair playing a revision-6 master and a real TCP
# listener on 127.0.0.1: a screening child gives a connection whose header
# is cut short back unread (K, NOT_READY, no trailer), one whose request is
# not in yet back with the address trailer after reading exactly the
# header, serves one that is whole with the address, closes one with a
# bad header; a C's address trailer reaches the handler, and a K or W
# carries it back; without "proxy" a trailer is garbage.
#
#   prove -Iperl/lib perl/t/proxyworker.t
use strict;
use warnings;
use Test::More;
use IO::Socket::INET;
use Socket qw(AF_UNIX SOCK_STREAM SOCK_SEQPACKET PF_UNSPEC MSG_PEEK MSG_DONTWAIT);
use Time::HiRes ();
use Actd::Protocol qw(HEADER HEADER_SIZE TRAILER TRAILER_SIZE WIRE KEEP CONNECTION WRITE NOT_READY PROXY);
use Actd::Passfd;
use Actd::Offload;
use Actd::Proxy;
use Actd::Worker;

plan skip_all => 'passing file descriptors needs a 64-bit perl' if !Actd::Passfd::available();

my $listener = IO::Socket::INET->new(Listen => 16, LocalAddr => '127.0.0.1', LocalPort => 0, Blocking => 0)
    or die "listen: $!";

# worker: a screening child of a revision-6 master trusting 127.0.0.0/8 on
# listener 0; returns it and the master's end.
sub worker {
    my ($protocol) = @_;
    socketpair(my $master, my $child, AF_UNIX, SOCK_SEQPACKET, PF_UNSPEC) or die "socketpair: $!";
    my $w = bless { channel => $child, handoff => 1, protocol => $protocol // 6, screen => 'http',
        listeners => [$listener], proxy_from => Actd::Proxy::listener_networks('0=127.0.0.0/8'),
        offload_max => 1 << 20, sent => 0, reported => '' }, 'Actd::Worker';
    return ($w, $master);
}

# client: a connection to the listener that has sent $bytes, returned
# once they are in (arrived): a worker that accepts it then reads them.
sub client {
    my ($bytes) = @_;
    my $c = IO::Socket::INET->new(PeerAddr => $listener->sockhost, PeerPort => $listener->sockport) or die "connect: $!";
    syswrite $c, $bytes if length $bytes;
    my $deadline = Time::HiRes::time() + 10;    # a bound, not a speed
    until (arrived($c)) {
        die "connection not in the listener's queue with its bytes after 10 s" if Time::HiRes::time() > $deadline;
        Time::HiRes::sleep(0.001);    # the poll's period
    }
    return $c;
}

# arrived: whether the kernel has every byte $c sent acknowledged (SIOCOUTQ,
# 0x5411, is 0: they are in the server end's queue) and the listener has a
# connection to accept (each subtest makes one and takes it).
sub arrived {
    my ($c) = @_;
    my $unacked = pack 'i', -1;
    ioctl($c, 0x5411, $unacked) or die "SIOCOUTQ: $!";
    return 0 if unpack('i', $unacked) != 0;
    my $bits = '';
    vec($bits, fileno $listener, 1) = 1;
    return select($bits, undef, undef, 0) > 0;
}

# from_master: the next message the master's end got: (type, value,
# trailer, fd count, the fd as a handle).
sub from_master {
    my ($master) = @_;
    my ($packet, @fds) = Actd::Passfd::receive_fds(fileno $master, 256);
    my ($type, undef, undef, $value) = unpack HEADER, $packet;
    my $fh;
    open($fh, '+<&=', $fds[0]) or die if @fds;
    return ($type, $value, substr($packet, HEADER_SIZE), scalar @fds, $fh);
}

my $v1 = "PROXY TCP4 192.0.2.1 198.51.100.2 40000 80\r\n";
my $get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

subtest 'header cut short: K, nothing read' => sub {
    my ($w, $master) = worker();
    my $c = client(substr $v1, 0, 20);
    is_deeply [ $w->ready_one(0) ], [undef], 'not served here';
    my ($type, $value, $trailer, $count, $conn) = from_master($master);
    is_deeply [ $type, $value, $trailer, $count ], [ KEEP, NOT_READY, '', 1 ], 'K, NOT_READY, no trailer';
    recv($conn, my $peek, 100, MSG_PEEK | MSG_DONTWAIT);
    is $peek, substr($v1, 0, 20), 'nothing of the header read';
};

subtest 'header whole, request not: K with the address' => sub {
    my ($w, $master) = worker();
    my $c = client($v1 . "GET / HT");
    is_deeply [ $w->ready_one(0) ], [undef], 'not served here';
    my ($type, $value, $trailer, $count, $conn) = from_master($master);
    is_deeply [ $type, $value, $trailer, $count ], [ KEEP, NOT_READY, '192.0.2.1:40000', 1 ], 'K, NOT_READY, the address';
    recv($conn, my $peek, 100, MSG_PEEK | MSG_DONTWAIT);
    is $peek, "GET / HT", 'exactly the header read';
};

subtest 'header and request whole: served with the address' => sub {
    my ($w, $master) = worker();
    my $c = client($v1 . $get);
    my ($conn, $peer, $address) = $w->ready_one(0);
    ok $conn, 'served here';
    is $address, '192.0.2.1:40000', 'the address';
    sysread $conn, my $request, 1000;
    is $request, $get, 'the request follows';
};

subtest 'a bad header: closed' => sub {
    my ($w, $master) = worker();
    my $c = client("PROXY TCP9 x\r\n$get");
    is_deeply [ $w->ready_one(0) ], [undef], 'not served here';
    my $n = sysread $c, my $got, 100;
    ok !$n, 'the client reads end of file or a reset, no answer';
    ok !select(my $bits = do { my $b = ''; vec($b, fileno $master, 1) = 1; $b }, undef, undef, 0), 'nothing to the master';
};

subtest 'C with an address: the handler sees it, K carries it back' => sub {
    my ($w, $master) = worker();
    socketpair(my $conn, my $other, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die;
    Actd::Passfd::send_fds(fileno $master, pack(HEADER, CONNECTION, WIRE, 0, 0) . '[2001:db8::1]:443', fileno $conn) or die;
    my ($type, $listener, $value, $got, $extra) = $w->receive;
    is $extra->{address}, '[2001:db8::1]:443', 'received';
    my $seen;
    $w->{serve} = sub { $seen = $w->address; $w->{give_back} = 1 };
    $w->handed(0, $got, $extra->{address});
    is $seen, '[2001:db8::1]:443', 'the handler sees it';
    my @got = map { [ (from_master($master))[ 0, 2 ] ] } 1 .. 3;
    is_deeply \@got, [ [ 'B', '' ], [ KEEP, '[2001:db8::1]:443' ], [ 'I', '' ] ], 'B, K with the address, I';
};

subtest 'W carries the address' => sub {
    my ($w, $master) = worker();
    socketpair(my $conn, my $other, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die;
    local $w->{parkable} = 0;
    local $w->{address} = '192.0.2.1:40000';
    my $data = Actd::Offload::memory_file(\'rest', 0);
    ok $w->finish($conn, $data, 0, 4, 1), 'W sent';
    my ($type, $value, $trailer) = from_master($master);
    is $type, WRITE, 'W';
    is substr($trailer, TRAILER_SIZE), '192.0.2.1:40000', 'the address after the trailer';
};

subtest 'revision 5: no proxy, a trailer is garbage' => sub {
    my ($w, $master) = worker(5);
    ok !$w->proxy, 'proxy not announced';
    socketpair(my $conn, my $other, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die;
    Actd::Passfd::send_fds(fileno $master, pack(HEADER, CONNECTION, WIRE, 0, 0) . '192.0.2.1:1', fileno $conn) or die;
    ok !eval { $w->receive; 1 }, 'dies';
    like $@, qr/garbage/, 'garbage';
    is $w->trailer('192.0.2.1:1'), '', 'and sends none';
};

done_testing;
