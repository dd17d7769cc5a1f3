#!/usr/bin/perl
# limits.t: the request limits of Actd::Server (docs/perl.md,
# "Limits"): ACTD_MAX_REQUEST_BODY (absent or 0: none) answers 413 for a Content-Length over it
# without reading the body, and for a chunked body that grows past it
# without spooling beyond it; a head over 32 KiB or with more than 100
# fields gets 431. A socketpair plays the client; no actd.
#
#   prove -Iperl/lib perl/t/limits.t
use strict;
use warnings;
use Test::More;
use Socket qw(AF_UNIX SOCK_STREAM PF_UNSPEC SOL_SOCKET SO_RCVTIMEO);
use Actd::Server;

package StubWorker {
    sub new { bless {}, shift }
    sub report { }
    sub lasts { }
    sub offloads { 0 }
    sub address { undef }
    sub tally { }
}

# answer: what the handler makes of $request (sent by the client, which
# then shuts its side) with ACTD_MAX_REQUEST_BODY $max: (status or 'app',
# the first line the client read, the bytes of the request left unread,
# the body the application would get).
sub answer {
    my ($max, $request) = @_;
    local $ENV{ACTD_MAX_REQUEST_BODY} = $max;
    delete local $ENV{ACTD_MAX_REQUEST_BODY} if !defined $max;
    my $h = Actd::Server->new(read_timeout => 1);
    $h->{worker} = StubWorker->new;
    socketpair(my $conn, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
    syswrite($client, $request) == length $request or die "write: $!";
    shutdown $client, 1;
    my $c = { conn => $conn, buf => '', base => {}, alive => 1, exact => 0, next => 0 };
    my $env = $h->read_request($c);
    my $body;
    if (ref $env) {
        $body = do { local $/; my $in = $env->{'psgi.input'}; <$in> };
        $env = 'app';
    } else {
        $h->error_response($c, $env);
    }
    close $conn;
    my $answer = do { local $/; <$client> } // '';
    my ($line) = $answer =~ /\A([^\r]*)/;
    return ($env, $line, length $c->{buf}, $body);
}

my $body = 'x' x 5000;
my $chunked = join '', (map { sprintf("%x\r\n%s\r\n", 1000, 'y' x 1000) } 1 .. 5), "0\r\n\r\n";
my $post = "POST /up HTTP/1.1\r\nHost: x\r\n";

for my $tc (
    [ 'no limit', undef, "${post}Content-Length: 5000\r\n\r\n$body", 'app', 5000 ],
    [ 'Content-Length at the limit', 5000, "${post}Content-Length: 5000\r\n\r\n$body", 'app', 5000 ],
    [ 'Content-Length over it', 4999, "${post}Content-Length: 5000\r\n\r\n$body", 413 ],
    [ 'chunked at the limit', 5000, "${post}Transfer-Encoding: chunked\r\n\r\n$chunked", 'app', 5000 ],
    [ 'chunked over it', 4500, "${post}Transfer-Encoding: chunked\r\n\r\n$chunked", 413 ],
    [ 'limit 0: none', 0, "${post}Content-Length: 5000\r\n\r\n$body", 'app', 5000 ],
    [ 'an empty body', 1, "${post}Content-Length: 0\r\n\r\n", 'app', 0 ],
) {
    my ($name, $max, $request, $want, $size) = @$tc;
    subtest $name => sub {
        my ($got, $line, $unread, $input) = answer($max, $request);
        is $got, $want, 'status';
        if ($want eq 'app') {
            is length($input // ''), $size, 'the whole body reaches the application';
        } else {
            is $line, 'HTTP/1.1 413 Content Too Large', 'answered';
        }
    };
}

subtest 'Content-Length over it: answered at once' => sub {
    local $ENV{ACTD_MAX_REQUEST_BODY} = 10;
    my $h = Actd::Server->new(read_timeout => 5);
    $h->{worker} = StubWorker->new;
    socketpair(my $conn, my $client, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die;
    setsockopt($conn, SOL_SOCKET, SO_RCVTIMEO, pack 'l!l!', 2, 0) or die;    # a handler that waits fails, not hangs
    syswrite $client, "${post}Content-Length: 10000000\r\n\r\n" . ('z' x 100);    # the rest never comes
    my $c = { conn => $conn, buf => '', base => {}, alive => 1, exact => 0, next => 0 };
    my $start = time;
    is $h->read_request($c), 413, 'answered 413, not waiting for the body';
    ok time - $start < 5, 'before the read timeout';
};

subtest 'chunked over it: nothing spooled beyond the limit' => sub {
    local $ENV{ACTD_MAX_REQUEST_BODY} = 2500;
    my $h = Actd::Server->new;
    my $spooled = 0;
    no warnings 'redefine';
    local *Actd::Server::copy = sub { my ($self, $c, $n, $b) = @_; $spooled += $n;
        substr($c->{buf}, 0, $n, ''); 0 };
    my $c = { conn => undef, buf => $chunked, alive => 1 };
    is $h->read_chunked($c, {}, undef), 413, 'answered 413';
    is $spooled, 2000, 'two chunks of 1000 taken, not the third';
};

my $host = "Host: x\r\n";
for my $tc (
    [ '100 fields', "GET / HTTP/1.1\r\n$host" . ("X-A: b\r\n" x 99) . "\r\n", 'app' ],
    [ '101 fields', "GET / HTTP/1.1\r\n$host" . ("X-A: b\r\n" x 100) . "\r\n", 431 ],
    [ 'a head of 32 KiB', "GET / HTTP/1.1\r\n$host" . 'X-Big: ' . ('a' x (32768 - 16 - 9 - 7 - 4)) . "\r\n\r\n", 'app' ],
    [ 'a head over 32 KiB', "GET / HTTP/1.1\r\n$host" . 'X-Big: ' . ('a' x (32768 - 16 - 9 - 7 - 3)) . "\r\n\r\n", 431 ],
) {
    my ($name, $request, $want) = @$tc;
    subtest $name => sub {
        my ($got, $line) = answer(undef, $request);
        is $got, $want, 'status';
        is $line, 'HTTP/1.1 431 Request Header Fields Too Large', 'answered' if $want ne 'app';
    };
}

done_testing;
