#!/usr/bin/perl
# tls.t: TLS in the worker (docs/perl.md, "TLS"): the readiness rule of a
# TLS listener (a whole ClientHello, Actd::Screen::tls_ready) as a table,
# ACTD_TLS's parsing, the server options (TLS 1.2+, ALPN http/1.1), and
# that a TLS listener's connections never go back to the master (K, W)
# while the capability is announced only to a revision-6 master.
#
#   prove -Iperl/lib perl/t/tls.t
use strict;
use warnings;
use Test::More;
use Actd::Screen;
use Actd::TLS;
use Actd::Worker;

# record: a TLS record of $type with $fragment.
sub record { my ($type, $fragment) = @_; return pack('C n n', $type, 0x0301, length $fragment) . $fragment }

my $body = 'h' x 300;    # a ClientHello's body
my $hello = pack('C', 1) . substr(pack('N', length $body), 1) . $body;    # type 1, u24 length
my $whole = record(22, $hello);

for my $tc (
    [ 'nothing', '', 0 ],
    [ 'a whole ClientHello', $whole, 1 ],
    [ 'and more after it', $whole . record(20, "\1"), 1 ],
    [ 'the record header only', substr($whole, 0, 5), 0 ],
    [ 'four bytes of a record header', substr($whole, 0, 4), 0 ],
    [ 'half the ClientHello', substr($whole, 0, 150), 0 ],
    [ 'all but its last byte', substr($whole, 0, -1), 0 ],
    [ 'split over two records, whole', record(22, substr $hello, 0, 100) . record(22, substr $hello, 100), 1 ],
    [ 'split over two records, the second cut', record(22, substr $hello, 0, 100) . substr(record(22, substr $hello, 100), 0, 50), 0 ],
    [ 'split, the second header cut', record(22, substr $hello, 0, 100) . "\x16\x03", 0 ],
    [ 'split, then another record type', record(22, substr $hello, 0, 100) . record(21, "\2\0"), 1 ],
    [ 'an HTTP request: not TLS', "GET / HTTP/1.1\r\n", 1 ],
    [ 'a handshake not a ClientHello', record(22, "\2\0\0\1x"), 1 ],
    [ 'a record of length 0', record(22, ''), 1 ],
    [ 'a record too long', pack('C n n', 22, 0x0301, 20000), 1 ],
    [ 'a peek full', "\x16" . ("\0" x 32767), 1 ],
) {
    my ($name, $bytes, $want) = @$tc;
    is !!Actd::Screen::tls_ready($bytes), !!$want, $name;
}

{
    local $ENV{ACTD_TLS} = '0=7 2=8';
    is_deeply Actd::TLS::listeners(), { 0 => 7, 2 => 8 }, 'ACTD_TLS parsed';
    local $ENV{ACTD_TLS} = '0:7';
    ok !eval { Actd::TLS::listeners(); 1 }, 'a bad entry dies';
    like $@, qr/ACTD_TLS/, 'naming the variable';
    delete local $ENV{ACTD_TLS};
    is_deeply Actd::TLS::listeners(), {}, 'absent: none';
}

my %options = Actd::TLS::server_options('/proc/self/fd/9');
is $options{SSL_version}, 'SSLv23:!SSLv2:!SSLv3:!TLSv1:!TLSv1_1', 'TLS 1.2 and later';
is_deeply $options{SSL_alpn_protocols}, ['http/1.1'], 'ALPN http/1.1';
is $options{SSL_cert_file} . ' ' . $options{SSL_key_file}, '/proc/self/fd/9 /proc/self/fd/9', 'both from the one file';

my $w = bless { tls => { 1 => 9 }, protocol => 6 }, 'Actd::Worker';
is $w->may_park(0), 0, 'a plain listener may park';
ok !defined $w->may_park(1), 'a TLS listener may not (no K, no W)';
ok $w->announces_tls, 'tls announced to revision 6';
$w->{protocol} = 5;
ok !$w->announces_tls, 'not to revision 5';

done_testing;
