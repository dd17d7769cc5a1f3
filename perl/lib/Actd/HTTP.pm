package Actd::HTTP;

# Actd::HTTP: the HTTP/1.1 framing rules every actd worker kind keeps
# (docs/http.md; the corpus in internal/conformance checks them), for
# Plack::Handler::Actd. Pure functions of the bytes a client sent: each
# returns 0 for good (or not yet decided) and else the status to answer
# before closing. HTTP::Parser::XS then parses what these let through.

use strict;
use warnings;
use Exporter 'import';

our @EXPORT_OK = qw(HEAD_LIMIT LINE_LIMIT FIELD_LIMIT CHUNK_LINE_LIMIT skip_empty_lines head_status partial_status
    codings_status length_status chunk_size field_line_ok);

use constant {
    HEAD_LIMIT  => 32768,    # bytes of a head, empty lines before it and its CRLF CRLF included: 431
    LINE_LIMIT  => 8192,     # bytes of a request line without its CRLF: 414
    FIELD_LIMIT => 100,      # header fields: 431
    CHUNK_LINE_LIMIT => 4096,    # bytes of a chunk-size line without its CRLF: 400
};

my $TOKEN = qr/[!#\$%&'*+\-.^_`|~0-9A-Za-z]+/;
my $REQUEST_LINE = qr{\A$TOKEN [^\x00-\x20\x7f]+ HTTP/([0-9])\.[0-9]\z};
my $FIELD_LINE = qr/\A$TOKEN:[\t\x20-\x7e\x80-\xff]*\z/;

# skip_empty_lines: remove the CRLFs before a request line from $$buf;
# returns how many bytes went.
sub skip_empty_lines {
    my ($buf) = @_;
    return 0 if $$buf !~ s/\A((?:\015\012)+)//;
    return length $1;
}

# request_line_status: 0 for a good request line (without its CRLF), 505
# for another major version than 1, else 400; 414 if too long.
sub request_line_status {
    my ($line) = @_;
    return 414 if length $line > LINE_LIMIT;
    return 400 if $line !~ $REQUEST_LINE;
    return $1 eq '1' ? 0 : 505;
}

# field_line_ok: whether $line (without its CRLF) is NAME ":" VALUE, NAME a
# token, VALUE without controls but HTAB.
sub field_line_ok { return $_[0] =~ $FIELD_LINE }

# head_status: the status for $head, a whole head up to and with its
# CRLF CRLF, $skipped bytes of empty lines before it: request line, field
# lines, limits, and Host once (HTTP/1.1) or at most once (HTTP/1.0).
sub head_status {
    my ($head, $skipped) = @_;
    return 431 if length($head) + $skipped > HEAD_LIMIT;
    my ($line, @fields) = split /\015\012/, substr($head, 0, -4), -1;
    my $status = request_line_status($line);
    return $status if $status;
    return 431 if @fields > FIELD_LIMIT;
    my ($hosts, $lengths) = (0, 0);
    for (@fields) {
        return 400 if $_ !~ $FIELD_LINE;
        $hosts++   if /\Ahost:/i;
        $lengths++ if /\Acontent-length:/i;
    }
    return 400 if $hosts > 1 || $lengths > 1 || (!$hosts && $line =~ m{HTTP/1\.[1-9]\z});
    return 0;
}

# partial_status: the status for $buf, the start of a head with no CRLF
# CRLF yet, if no more bytes can make it good (the master's accept filter
# hands such a connection over at once): a bare CR or LF, a control byte,
# a bad or long request line, HEAD_LIMIT bytes. 0 while it may still be good.
sub partial_status {
    my ($buf, $skipped) = @_;
    return 431 if length($buf) + $skipped >= HEAD_LIMIT;
    return 400 if $buf =~ /\015(?=[^\012])|(?<!\015)\012|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
    my $end = index $buf, "\015\012";
    return request_line_status(substr $buf, 0, $end) if $end >= 0;
    return length $buf > LINE_LIMIT + 1 ? 414 : 0;
}

# codings_status: the status for a Transfer-Encoding of $codings (its
# values joined with ","): 0 for chunked alone; 400 if chunked is not the
# last coding, or comes twice, or a coding is not a token; 501 for another
# coding before chunked (none is decoded).
sub codings_status {
    my ($codings) = @_;
    my @list = map { lc s/\A[ \t]+|[ \t]+\z//gr } split /,/, $codings, -1;
    return 400 if !@list || $list[-1] ne 'chunked' || grep { $_ !~ /\A$TOKEN\z/ || $_ eq 'chunked' } @list[ 0 .. $#list - 1 ];
    return @list > 1 ? 501 : 0;
}

# length_status: the status for a Content-Length of $length: 0 for 1 to 18
# digits, 413 for more, 400 for anything else.
sub length_status {
    my ($length) = @_;
    return 400 if $length !~ /\A[0-9]+\z/;
    return length $length > 18 ? 413 : 0;
}

# chunk_size: the size in a chunk-size line (without its CRLF): hex
# digits, then spaces and extensions of visible bytes; undef if malformed.
sub chunk_size {
    my ($line) = @_;
    return undef if $line !~ /\A([0-9A-Fa-f]{1,16})[ \t]*(?:;[\t\x20-\x7e\x80-\xff]*)?\z/;
    no warnings 'portable';
    return hex $1;
}

1;
