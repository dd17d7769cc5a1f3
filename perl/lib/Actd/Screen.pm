package Actd::Screen;

# Actd::Screen: the accept filters' readiness rule (docs/protocol.md,
# "Accept filters: children first"), for a worker that accepts by itself
# under a filter (capability screen, revision 4) and so must tell, right
# after accept, whether a connection's request is there: look peeks at
# what the client has sent without taking it, ready judges those bytes.
# The rule is the master's (Go: acceptfilter.Ready in prefork/acceptfilter);
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

# ready: whether $bytes, what a client has sent so far, make its
# connection ready under $filter ("data" or "http"). Returns false for no
# bytes; true under data for any; under http (docs/http.md, the master's
# acceptfilter.Ready), true once they hold a whole head (CRLF CRLF after
# the request line, CRLFs before it skipped), or a fault no more bytes can
# mend (a bare LF or CR, a control byte other than HTAB, a malformed or too
# long request line), or reach HEAD_LIMIT; else false.
sub ready {
    my ($filter, $bytes) = @_;
    return 0 if $bytes eq '';
    return 1 if $filter eq 'data' || length $bytes >= HEAD_LIMIT;
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

# request_line: a method token, SP, a target of visible bytes, SP, HTTP/D.D.
sub request_line {
    return $_[0] =~ m{\A[!#\$%&'*+\-.^_`|~0-9A-Za-z]+ [\x21-\x7e\x80-\xff]+ HTTP/[0-9]\.[0-9]\z};
}

# look: peek at connection $conn, just accepted, with recv(MSG_PEEK |
# MSG_DONTWAIT) of up to HEAD_LIMIT bytes. Returns READY when the bytes
# make it ready under $filter; NOT_READY when they do not, or nothing came
# yet (EAGAIN); GONE at end of file or on any other error.
sub look {
    my ($filter, $conn) = @_;
    while (!defined recv($conn, $peeked, HEAD_LIMIT, MSG_PEEK | MSG_DONTWAIT)) {
        next if $! == EINTR;
        return $! == EAGAIN || $! == EWOULDBLOCK ? NOT_READY : GONE;
    }
    return GONE if $peeked eq '';
    return ready($filter, $peeked) ? READY : NOT_READY;
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
