package Actd::AccessLog;

# Actd::AccessLog: one line per request (actd's --access-log, issue 25),
# for Plack::Handler::Actd. actd names the sink in ACTD_ACCESS_LOG:
# "journal" (one native-protocol entry per request, with fields of its
# own, Actd::Journal; stderr when there is no journal socket) or "fd:N"
# (a file actd opened with O_APPEND, one write(2) per line); absent, no
# log. ACTD_ACCESS_LOG_FORMAT, when set, is an Apache LogFormat of
# gunicorn's letters (DIRECTIVES); else DEFAULT_FORMAT. Neither the line
# nor a field carries the query string but %q.

use strict;
use warnings;
use Errno qw(EINTR);
use File::Basename ();
use POSIX ();
use Actd::Journal;

our $VERSION = '0.1.0';

use constant DEFAULT_FORMAT => '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D';

my @MONTHS = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);

# What each directive stands for, from a request's record (see line).
my %DIRECTIVES = (
    h   => sub { $_[0]{remote_addr} // '-' },
    l   => sub { '-' },
    u   => sub { '-' },
    t   => sub { apache_time($_[0]{time}) },
    r   => sub { "$_[0]{method} $_[0]{path} $_[0]{protocol}" },
    m   => sub { $_[0]{method} },
    U   => sub { $_[0]{path} },
    q   => sub { length $_[0]{query} ? "?$_[0]{query}" : '' },
    H   => sub { $_[0]{protocol} },
    s   => sub { $_[0]{status} },
    '>s' => sub { $_[0]{status} },
    b   => sub { $_[0]{bytes} ? $_[0]{bytes} : '-' },
    B   => sub { $_[0]{bytes} },
    D   => sub { $_[0]{duration_us} },
    T   => sub { int($_[0]{duration_us} / 1e6) },
    P   => sub { $$ },
    '%' => sub { '%' },
);

# new: the access log the environment asks for, or undef when
# ACTD_ACCESS_LOG is absent or empty. Dies naming the variable for a
# value that is neither "journal" nor "fd:N" of an open fd.
sub new {
    my ($class) = @_;
    my $where = $ENV{ACTD_ACCESS_LOG} // '';
    return undef if $where eq '';
    my $self = bless { format => compile($ENV{ACTD_ACCESS_LOG_FORMAT} // DEFAULT_FORMAT),
        ident => File::Basename::basename($0) }, $class;
    if ($where eq 'journal') {
        $self->{journal} = Actd::Journal::native_socket();    # undef: stderr
    } elsif ($where =~ /\Afd:([0-9]+)\z/) {
        open($self->{file}, '>>&=', $1) or die "actd: ACTD_ACCESS_LOG=$where: $!\n";
    } else {
        die "actd: ACTD_ACCESS_LOG=\"$where\": want journal or fd:N\n";
    }
    return $self;
}

# compile: $format as a list of parts: literal text, or a code reference
# that takes a request's record. An unknown directive stays as it is.
sub compile {
    my ($format) = @_;
    my @parts;
    while ($format =~ /\G(?:([^%]+)|%\{([^}]*)\}i|%(>s|[a-zA-Z%])|(%))/gc) {
        if (defined $1) {
            push @parts, $1;
        } elsif (defined $2) {
            my $key = header_key($2);
            push @parts, sub { $_[0]{env}{$key} // '-' };
        } elsif (defined $3) {
            push @parts, $DIRECTIVES{$3} // "%$3";
        } else {
            push @parts, '%';
        }
    }
    return \@parts;
}

# header_key: the PSGI environment's key of request header $name.
sub header_key {
    my $key = uc $_[0] =~ tr/-/_/r;
    return $key =~ /\ACONTENT_(?:TYPE|LENGTH)\z/ ? $key : "HTTP_$key";
}

# line: the formatted line (no newline) of $record: remote_addr, method,
# path (without the query), query, protocol, status, bytes (of the body
# sent), duration_us, time (epoch seconds), env (the PSGI environment).
sub line {
    my ($self, $record) = @_;
    return join '', map { ref $_ ? $_->($record) : $_ } @{ $self->{format} };
}

# log: write $record's line to the sink; a sink that fails loses the line,
# never the response.
sub log {
    my ($self, $record) = @_;
    my $line = $self->line($record);
    if ($self->{file}) {
        my $text = "$line\n";
        my $n;
        do { $n = syswrite($self->{file}, $text) } while !defined $n && $! == EINTR;
        return;
    }
    return if $self->{journal} && Actd::Journal::send_native($self->{journal}, $self->fields($record, $line));
    print STDERR "$line\n";
}

# fields: the journal entry's fields for $record and its $line.
sub fields {
    my ($self, $record, $line) = @_;
    return (MESSAGE => $line, PRIORITY => 6, SYSLOG_IDENTIFIER => $self->{ident},
        HTTP_STATUS => $record->{status}, HTTP_METHOD => $record->{method}, HTTP_PATH => $record->{path},
        HTTP_BYTES => $record->{bytes}, HTTP_DURATION_US => $record->{duration_us},
        REMOTE_ADDR => $record->{remote_addr} // '');
}

# apache_time: epoch seconds $time as [10/Oct/2000:13:55:36 -0700], local
# time, English month names whatever the locale.
sub apache_time {
    my ($time) = @_;
    my @t = localtime int $time;
    return sprintf '[%02d/%s/%04d:%02d:%02d:%02d %s]', $t[3], $MONTHS[ $t[4] ], $t[5] + 1900, @t[ 2, 1, 0 ],
        POSIX::strftime('%z', @t);
}

1;

__END__

=head1 NAME

Actd::AccessLog - the access log of Plack::Handler::Actd

=head1 DESCRIPTION

See docs/perl.md, "Access log", in the actd repository.

=cut
