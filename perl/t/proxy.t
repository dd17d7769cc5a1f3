#!/usr/bin/perl
# proxy.t: the PROXY protocol parser and the trusted networks
# (Actd::Proxy, docs/perl.md "PROXY protocol"): tables of headers, v1 and
# v2, whole, cut short and malformed, and of addresses in networks.
#
#   prove -Iperl/lib perl/t/proxy.t
use strict;
use warnings;
use Test::More;
use Socket qw(AF_INET AF_INET6 inet_pton);
use Actd::Proxy;

my ($C, $I, $B) = (Actd::Proxy::COMPLETE, Actd::Proxy::INCOMPLETE, Actd::Proxy::BAD);
my $sig = Actd::Proxy::V2_SIGNATURE;

# v2: a v2 header with command $cmd, family $fam and $body after it.
sub v2 { my ($cmd, $fam, $body) = @_; return $sig . pack('C C n', $cmd, $fam, length $body) . $body }
my $v2tcp4 = v2(0x21, 0x11, inet_pton(AF_INET, '192.0.2.1') . inet_pton(AF_INET, '198.51.100.2') . pack('n n', 40000, 443));
my $v2tcp6 = v2(0x21, 0x21, inet_pton(AF_INET6, '2001:db8::1') . inet_pton(AF_INET6, '2001:db8::2') . pack('n n', 5555, 443));
my $v2tlv = v2(0x21, 0x11, inet_pton(AF_INET, '192.0.2.1') . inet_pton(AF_INET, '198.51.100.2') . pack('n n', 1, 2)
    . "\x04\x00\x03abc");

my $get = "GET / HTTP/1.1\r\n";
for my $tc (
    # name, bytes, want (state, length, address)
    [ 'v1 TCP4', "PROXY TCP4 192.0.2.1 198.51.100.2 40000 443\r\n$get", [ $C, 45, '192.0.2.1:40000' ] ],
    [ 'v1 TCP6', "PROXY TCP6 2001:db8::1 2001:db8::2 5555 443\r\n", [ $C, 45, '[2001:db8::1]:5555' ] ],
    [ 'v1 UNKNOWN', "PROXY UNKNOWN\r\n$get", [ $C, 15, undef ] ],
    [ 'v1 UNKNOWN with addresses', "PROXY UNKNOWN ffff:: ffff:: 1 2\r\n", [ $C, 33, undef ] ],
    [ 'v1 cut short', "PROXY TCP4 192.0.2.1 19", [$I] ],
    [ 'v1 first bytes', "PRO", [$I] ],
    [ 'v1 CR last', "PROXY TCP4 192.0.2.1 198.51.100.2 40000 443\r", [$I] ],
    [ 'v1 at 107 bytes', "PROXY UNKNOWN " . ('a' x 91) . "\r\n", [ $C, 107, undef ] ],
    [ 'v1 over 107 bytes', "PROXY UNKNOWN " . ('a' x 92) . "\r\n", [$B] ],
    [ 'v1 107 bytes, no end', "PROXY UNKNOWN " . ('a' x 93), [$B] ],
    [ 'v1 bad family', "PROXY UDP4 192.0.2.1 198.51.100.2 1 2\r\n", [$B] ],
    [ 'v1 TCP4 with IPv6', "PROXY TCP4 ::1 ::1 1 2\r\n", [$B] ],
    [ 'v1 port too big', "PROXY TCP4 192.0.2.1 198.51.100.2 65536 443\r\n", [$B] ],
    [ 'v1 port with a leading zero', "PROXY TCP4 192.0.2.1 198.51.100.2 080 443\r\n", [$B] ],
    [ 'v1 bad address', "PROXY TCP4 192.0.2.300 198.51.100.2 1 2\r\n", [$B] ],
    [ 'v1 bare LF', "PROXY TCP4 192.0.2.1 198.51.100.2 1 2\n", [$B] ],
    [ 'v1 bare CR', "PROXY TCP4\r 192", [$B] ],
    [ 'an HTTP request', $get, [$B] ],
    [ 'v2 TCP4', "$v2tcp4$get", [ $C, 28, '192.0.2.1:40000' ] ],
    [ 'v2 TCP6', $v2tcp6, [ $C, 52, '[2001:db8::1]:5555' ] ],
    [ 'v2 with a TLV', $v2tlv, [ $C, 34, '192.0.2.1:1' ] ],
    [ 'v2 LOCAL', v2(0x20, 0x00, ''), [ $C, 16, undef ] ],
    [ 'v2 LOCAL with addresses', v2(0x20, 0x11, "x" x 12), [ $C, 28, undef ] ],
    [ 'v2 UDP: as LOCAL', v2(0x21, 0x12, "x" x 12), [ $C, 28, undef ] ],
    [ 'v2 unix: as LOCAL', v2(0x21, 0x31, "x" x 216), [ $C, 232, undef ] ],
    [ 'v2 signature only', substr($sig, 0, 7), [$I] ],
    [ 'v2 header only', substr($v2tcp4, 0, 16), [$I] ],
    [ 'v2 cut short', substr($v2tcp4, 0, 27), [$I] ],
    [ 'v2 version 1', $sig . pack('C C n', 0x11, 0x11, 12) . ("x" x 12), [$B] ],
    [ 'v2 command 2', $sig . pack('C C n', 0x22, 0x11, 12) . ("x" x 12), [$B] ],
    [ 'v2 TCP4 too short', v2(0x21, 0x11, "x" x 11), [$B] ],
    [ 'v2 TCP6 too short', v2(0x21, 0x21, "x" x 35), [$B] ],
    [ 'v2 at 1024 bytes after the header', v2(0x20, 0, "x" x 1024), [ $C, 1040, undef ] ],
    [ 'v2 over 1024', $sig . pack('C C n', 0x21, 0x11, 1025), [$B] ],
    [ 'v2 bad signature', "\r\n\r\n\0\r\nQUIX\n" . ("x" x 8), [$B] ],
) {
    my ($name, $bytes, $want) = @$tc;
    is_deeply [ Actd::Proxy::parse($bytes) ], $want, $name;
}

my $nets = Actd::Proxy::listener_networks('0=127.0.0.0/8 0=::1/128 1=10.0.0.0/8 1=192.0.2.7 2=2001:db8::/33');
for my $tc (
    [ 0, '127.0.0.1', 1 ], [ 0, '127.255.0.9', 1 ], [ 0, '128.0.0.1', 0 ], [ 0, '::1', 1 ], [ 0, '::2', 0 ],
    [ 0, '::ffff:127.0.0.1', 1, 'IPv4-mapped matches IPv4' ], [ 1, '127.0.0.1', 0, 'another listener' ],
    [ 1, '10.1.2.3', 1 ], [ 1, '192.0.2.7', 1, 'a bare IP is a /32' ], [ 1, '192.0.2.8', 0 ],
    [ 2, '2001:db8:7fff::1', 1 ], [ 2, '2001:db8:8000::1', 0, '/33 cuts inside a byte' ], [ 3, '127.0.0.1', 0 ],
    [ 0, 'localhost', 0, 'not an address' ],
) {
    my ($index, $ip, $want, $why) = @$tc;
    is !!Actd::Proxy::contains($nets->{$index}, $ip), !!$want, "listener $index, $ip" . ($why ? ": $why" : '');
}
ok !eval { Actd::Proxy::listener_networks('0=300.0.0.0/8'); 1 }, 'a bad network dies';
like $@, qr/ACTD_PROXY_FROM/, 'naming the variable';
ok !eval { Actd::Proxy::listener_networks('127.0.0.1'); 1 }, 'an entry without INDEX dies';
ok !eval { Actd::Proxy::networks('10.0.0.0/33', 'X'); 1 }, 'a prefix too long dies';
is_deeply [ map { scalar @{ Actd::Proxy::networks($_, 'X') } } '', '10.0.0.0/8, ::1 ,192.0.2.1' ], [ 0, 3 ], 'comma-separated lists';

is_deeply [ Actd::Proxy::split_address('[2001:db8::1]:443') ], [ '2001:db8::1', 443 ], 'split IPv6';
is_deeply [ Actd::Proxy::split_address('192.0.2.1:80') ], [ '192.0.2.1', 80 ], 'split IPv4';
is_deeply [ Actd::Proxy::split_address('nonsense') ], [], 'split nonsense';

# peer_address: the socket's peer as HOST:PORT (a screening child's K
# after LOCAL or UNKNOWN)
is Actd::Proxy::peer_address(Socket::pack_sockaddr_in(8080, inet_pton(AF_INET, '127.0.0.1'))), '127.0.0.1:8080', 'peer IPv4';
is Actd::Proxy::peer_address(Socket::pack_sockaddr_in6(443, inet_pton(AF_INET6, '::1'))), '[::1]:443', 'peer IPv6';
is Actd::Proxy::peer_address(Socket::pack_sockaddr_un('/x')), undef, 'peer unix';
is Actd::Proxy::peer_address(undef), undef, 'peer none';

done_testing;
