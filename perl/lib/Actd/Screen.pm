package Actd::Screen;

# Actd::Screen: the accept filters' readiness rule (docs/protocol.md,
# "Accept filters: children first"), for a worker that accepts by itself
# under a filter (capability screen, revision 4) and so must tell, right
# after accept, whether a connection's request is there: look peeks at
# what the client has sent without taking it, ready judges those bytes.
# The rule is the master's (Go: acceptfilter.Whole in prefork/acceptfilter);
# perl/screen_test.go checks both against one table.

use strict;
use warnings;
use Socket qw(MSG_PEEK MSG_DONTWAIT);
use Errno qw(EAGAIN EWOULDBLOCK EINTR);

our $VERSION = '0.1.0';

use constant {
    HEAD_LIMIT => 32768,    # bytes looked at: a head not ended within them is ready anyway
    READY      => 1,        # look: serve it
    NOT_READY  => 0,        # look: give it to the master (K)
    GONE       => -1,       # look: the client closed or failed: close it
};

my $peeked = "\0" x HEAD_LIMIT;    # look's buffer, allocated once

use constant LINE_LIMIT => 8192;    # the longest request line: a longer one is answered 414

# ready: whether $bytes, what a client has sent so far (one peek of at
# most HEAD_LIMIT), make its connection ready under $filter ("data" or
# "http"). Returns false for no bytes; true under data for any; under http
# (docs/http.md, the master's acceptfilter.Whole): without a whole head,
# true at a fault no more bytes can mend (head_ready); with one, true at a
# fault before its end, else only if its body is whole in $bytes
# (body_in, docs/protocol.md "The body rule").
sub ready {
    my ($filter, $bytes) = @_;
    return 0 if $bytes eq '';
    return 1 if $filter eq 'data';
    my $start = 0;
    $start += 2 while substr($bytes, $start, 2) eq "\r\n";
    my $end = index($bytes, "\r\n\r\n", $start);
    return head_ready($bytes) if $end < 0;
    return 1 if $end + 4 > HEAD_LIMIT || head_ready(substr($bytes, 0, $end + 2));
    return body_in(substr($bytes, $start, $end - $start), substr($bytes, $end + 4));
}

# head_ready: the head rule: true once $bytes hold a whole head (CRLF CRLF
# after the request line, CRLFs before it skipped), or a fault no more
# bytes can mend (a bare LF or CR, a control byte other than HTAB, a
# malformed or too long request line), or reach HEAD_LIMIT; else false.
sub head_ready {
    my ($bytes) = @_;
    return 1 if length $bytes >= HEAD_LIMIT;
    my $start = 0;
    $start += 2 while substr($bytes, $start, 2) eq "\r\n";
    my $line = index($bytes, "\r\n", $start);
    return 1 if $line < 0 && length($bytes) - $start > LINE_LIMIT + 1;
    return 1 if $line >= 0 && $line - $start > LINE_LIMIT;
    return 1 if $line >= 0 && !request_line(substr($bytes, $start, $line - $start));
    my $rest = substr($bytes, $start);
    return 1 if $rest =~ /(?:\A|[^\r])\n/ || $rest =~ /\r(?!\n|\z)/;    # a bare LF, a bare CR
    return 1 if $rest =~ /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;    # a control byte
    return index($rest, "\r\n\r\n") >= 0 ? 1 : 0;
}

# body_in: whether the body that $head (request line and field lines,
# without the final CRLF CRLF) announces is whole in $body, the bytes
# after the head. True for no body, and for framing every worker answers
# at once with an error (Content-Length twice or not 1 to 18 digits,
# Transfer-Encoding other than one chunked in HTTP/1.1 without
# Content-Length); a chunked body by chunked_end.
sub body_in {
    my ($head, $body) = @_;
    my ($length, $chunked) = framing($head) or return 1;
    return chunked_end($body) != 0 if $chunked;
    return length($body) >= $length ? 1 : 0;
}

# framing: the body that $head (request line and field lines, without the
# final CRLF CRLF) announces: ($length, $chunked), (0, 0) for none; an
# empty list for framing every worker answers at once with an error
# (Content-Length twice or not 1 to 18 digits, Transfer-Encoding other
# than one chunked in HTTP/1.1 without Content-Length).
sub framing {
    my ($head) = @_;
    my ($request, @fields) = split /\r\n/, $head, -1;
    my ($lengths, $codings, $length, $chunked) = (0, 0, 0, 0);
    for my $field (@fields) {
        my ($name, $value) = split /:/, $field, 2;
        ($value //= '') =~ s/\A[ \t]+|[ \t]+\z//g;
        if (lc $name eq 'content-length') {
            $lengths++;
            $length = $value =~ /\A[0-9]{1,18}\z/ ? $value : -1;
        } elsif (lc $name eq 'transfer-encoding') {
            $codings++;
            $chunked = lc $value eq 'chunked';
        }
    }
    return () if $lengths > 1 || $lengths == 1 && $length < 0;
    return () if $codings > 1 || $codings == 1 && ($lengths || $request !~ m{HTTP/1\.1\z} || !$chunked);
    return ($length, $chunked ? 1 : 0);
}

# chunked_end: the length of the whole chunked body at the start of $body
# (chunks up to a size-0 line, trailers up to an empty line), -1 at a
# fault (a size line not starting with 1 to 16 hex digits below 2**63,
# chunk data not followed by CRLF, a bare LF), 0 while it may go on.
sub chunked_end {
    my ($body) = @_;
    my $at = 0;
    while (1) {
        my $line = index($body, "\r\n", $at);
        return open_end(substr($body, $at), LINE_LIMIT) if $line < 0;
        my $size_line = substr($body, $at, $line - $at);
        return -1 unless $size_line =~ /\A([0-9A-Fa-f]{1,16})(?![0-9A-Fa-f])/ && index($size_line, "\n") < 0;
        my $digits = $1;
        return -1 if length $digits == 16 && $digits =~ /\A[89A-Fa-f]/;
        $at = $line + 2;
        last if $digits =~ /\A0+\z/;
        my $size = do { no warnings 'portable'; hex $digits };
        return 0 if $size > length($body) - $at - 2;
        $at += $size;
        return -1 if substr($body, $at, 2) ne "\r\n";
        $at += 2;
    }
    while (1) {    # trailers
        my $line = index($body, "\r\n", $at);
        return open_end(substr($body, $at), HEAD_LIMIT) if $line < 0;
        return -1 if index(substr($body, $at, $line - $at), "\n") >= 0;
        my $empty = $line == $at;
        $at = $line + 2;
        return $at if $empty;
    }
}

# open_end: for a line not ended yet: -1 if it holds a bare LF or is over
# $limit bytes, else 0.
sub open_end {
    my ($rest, $limit) = @_;
    return index($rest, "\n") >= 0 || length($rest) > $limit ? -1 : 0;
}

# request_line: a method token, SP, a target of visible bytes, SP, HTTP/D.D.
sub request_line {
    return $_[0] =~ m{\A[!#\$%&'*+\-.^_`|~0-9A-Za-z]+ [\x21-\x7e\x80-\xff]+ HTTP/[0-9]\.[0-9]\z};
}

# tls_ready: the readiness rule of a TLS listener (ACTD_TLS), whatever
# the filter: true once $bytes hold a complete ClientHello (TLS records of
# type 22 carrying the first handshake message, type 1, to its 3-byte
# length), and at once for bytes that are not a TLS handshake (the
# worker's handshake fails fast and closes) or fill a peek (HEAD_LIMIT);
# false while more bytes may complete it.
sub tls_ready {
    my ($bytes) = @_;
    return 0 if $bytes eq '';
    return 1 if length $bytes >= HEAD_LIMIT;
    my ($at, $handshake) = (0, '');
    while (1) {
        return 0 if $at >= length $bytes;
        return 1 if ord(substr $bytes, $at, 1) != 22;    # not a handshake record
        return 0 if length($bytes) - $at < 5;
        my $length = unpack 'n', substr $bytes, $at + 3, 2;
        return 1 if $length == 0 || $length > 16384 + 2048;
        $handshake .= substr $bytes, $at + 5, $length;
        return 0 if $handshake eq '';
        return 1 if ord($handshake) != 1;    # not a ClientHello
        return 1 if length $handshake >= 4 && length $handshake >= 4 + unpack('N', "\0" . substr $handshake, 1, 3);
        return 0 if length($bytes) < $at + 5 + $length;
        $at += 5 + $length;
    }
}

# look: peek at connection $conn, just accepted, with recv(MSG_PEEK |
# MSG_DONTWAIT) of up to HEAD_LIMIT bytes. Returns READY when the bytes
# make it ready under $filter ("tls" for a TLS listener: tls_ready); NOT_READY when they do not, or nothing came
# yet (EAGAIN); GONE at end of file or on any other error.
sub look {
    my ($filter, $conn) = @_;
    while (!defined recv($conn, $peeked, HEAD_LIMIT, MSG_PEEK | MSG_DONTWAIT)) {
        next if $! == EINTR;
        return $! == EAGAIN || $! == EWOULDBLOCK ? NOT_READY : GONE;
    }
    return GONE if $peeked eq '';
    return ($filter eq 'tls' ? tls_ready($peeked) : ready($filter, $peeked)) ? READY : NOT_READY;
}

1;

__END__

=head1 NAME

Actd::Screen - the readiness rule of actd's accept filters, in core Perl

=head1 SYNOPSIS

  my $state = Actd::Screen::look('http', $conn);    # READY, NOT_READY or GONE
  Actd::Screen::ready('http', "GET / HTTP/1.0\r\n\r\n");    # true

=head1 DESCRIPTION

Used by L<Actd::Worker> under actd's accept filters: see docs/protocol.md,
"Accept filters: children first".

=cut
