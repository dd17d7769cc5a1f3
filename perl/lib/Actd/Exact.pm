package Actd::Exact;

# Actd::Exact: exact reading (docs/protocol.md, "Accept filters: pipelined
# and partial next requests"), for Plack::Handler::Actd on a connection
# that may go back to the master (K). K needs no byte of the next request
# read, so before reading a request with nothing of it in hand the handler
# peeks (span), finds where the request ends by the framing of
# docs/http.md, and reads no further than the whole requests the peek
# shows. A next request that the peek shows not whole (the children's
# rule, Actd::Screen::ready) is not read at all: NOT_WHOLE, and the
# connection goes back to the master, which holds it until it is. The
# rule is Go's (cmd/actd/httpd_exact.go) and Python's (actd.exact); the
# cost is one recv(MSG_PEEK) per request.

use strict;
use warnings;
use Actd::Screen;
use Socket qw(MSG_PEEK MSG_DONTWAIT);
use Errno qw(EAGAIN EWOULDBLOCK EINTR);

our $VERSION = '0.1.0';

use constant NOT_WHOLE => -1;    # span: the next request is not whole: give the connection back unread

# request_span: ($span, $whole) for the request at the start of $peek:
# $span its length, $whole whether $peek holds all of it. For one not
# whole, $span is its length if its head tells it (Content-Length), else
# undef: a head not yet whole, a chunked body whose end is not in $peek,
# or a head the handler answers with an error and a close.
sub request_span {
    my ($peek) = @_;
    my $start = 0;
    $start += 2 while substr($peek, $start, 2) eq "\r\n";
    my $end = index($peek, "\r\n\r\n", $start);
    return (undef, 0) if $end < 0 || $end + 4 > Actd::Screen::HEAD_LIMIT;
    return (undef, 0) if Actd::Screen::head_ready(substr($peek, 0, $end + 2));    # a fault before its end
    my ($length, $chunked) = Actd::Screen::framing(substr($peek, $start, $end - $start)) or return (undef, 0);
    my $head = $end + 4;
    if ($chunked) {
        my $body = Actd::Screen::chunked_end(substr($peek, $head));
        return $body > 0 ? ($head + $body, 1) : (undef, 0);
    }
    return ($head + $length, $head + $length <= length $peek ? 1 : 0);
}

# whole_span: how many bytes at the start of $peek are whole requests, or,
# if not even the first is whole, its span (request_span: undef if
# unknown).
sub whole_span {
    my ($peek) = @_;
    my $at = 0;
    while ($at < length $peek) {
        my ($span, $whole) = request_span(substr $peek, $at);
        return $at ? $at : $span if !$whole;
        $at += $span;
    }
    return $at;
}

# whole: whether $buf, bytes read past the request served, are whole
# requests (else they are part of a next one).
sub whole {
    my ($buf) = @_;
    my $span = whole_span($buf);
    return defined $span && $span == length $buf;
}

# span: peek at $conn (recv MSG_PEEK|MSG_DONTWAIT, up to HEAD_LIMIT bytes)
# before reading a request with nothing of it read; $next is true for a
# request after the first. Returns how many bytes the reads may take
# (whole_span); undef for no bound (nothing sent yet on a first request,
# end of file, an error: the read that follows sees it; or an end the peek
# cannot show); NOT_WHOLE for a next request not whole by the children's
# rule, or not begun: none of it was read.
sub span {
    my ($conn, $next) = @_;
    my $peek = '';
    while (!defined recv($conn, $peek, Actd::Screen::HEAD_LIMIT, MSG_PEEK | MSG_DONTWAIT)) {
        next if $! == EINTR;
        return $next && ($! == EAGAIN || $! == EWOULDBLOCK) ? NOT_WHOLE : undef;
    }
    return undef if $peek eq '';
    my $span = whole_span($peek);
    my $whole = defined $span && $span > 0 && $span <= length $peek;
    return NOT_WHOLE if $next && !$whole && !Actd::Screen::ready('http', $peek);
    return $span;
}

1;

__END__

=head1 NAME

Actd::Exact - read no byte past the request served, in core Perl

=head1 SYNOPSIS

  my $left = Actd::Exact::span($conn, $next);    # bytes to read, undef, or NOT_WHOLE
  Actd::Exact::whole_span("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET");    # 27

=head1 DESCRIPTION

Used by L<Plack::Handler::Actd> under actd's accept filters: see
docs/protocol.md, "Accept filters: pipelined and partial next requests".

=cut
