package Actd::Journal;

# Actd::Journal: priorities for what the handler writes to stderr under
# systemd. A child's stderr is the master's, the journal when actd runs as
# a service: each line becomes an entry at priority 6 (info), so an
# application's error would be a run of info entries that
# `journalctl -p err` never shows. journald reads a "<N>" prefix on a line
# as that line's priority (SyslogLevelPrefix=, on by default), but only a
# stream that is the journal should get one: systemd names it in
# JOURNAL_STREAM ("DEVICE:INODE" of the stream it connected), which a child
# inherits with the master's stderr. Elsewhere (a terminal, a file, a
# pipe) lines stay as they are. The rule is the Python adapter's
# (actd.journal). Entries with fields of their own (the access log,
# Actd::AccessLog) go to the journal's native socket instead.

use strict;
use warnings;
use Scalar::Util ();

our $VERSION = '0.1.0';

use constant {
    ERR     => 3,    # syslog priority of an error
    WARNING => 4,    # syslog priority of a warning
};

# prefix: "<$priority>" if $fh is the journal's stream (JOURNAL_STREAM
# names its device and inode); "" if it is not, JOURNAL_STREAM is unset,
# or $fh is no open file handle (psgi.errors may be any object).
sub prefix {
    my ($fh, $priority) = @_;
    my $want = $ENV{JOURNAL_STREAM} // '';
    return '' if $want eq '';
    my $handle = Scalar::Util::openhandle($fh) // return '';
    my ($dev, $ino) = stat $handle or return '';
    return "$dev:$ino" eq $want ? "<$priority>" : '';
}

# lines: $text with $tag before each of its lines, and ending in a newline.
sub lines {
    my ($text, $tag) = @_;
    $text .= "\n" if $text !~ /\n\z/;
    $text =~ s/^/$tag/mg if $tag ne '';
    return $text;
}

# emit: write $text to $fh (STDERR), each line at $priority if $fh is the
# journal. Text of several lines (a stack trace) going to the journal is
# sent as one native entry instead, so that `journalctl -p err` shows it
# whole (the Python adapter's rule); if the journal's socket does not take
# it, the prefixed lines are written after all.
sub emit {
    my ($fh, $priority, $text) = @_;
    $fh //= \*STDERR;
    my $tag = prefix($fh, $priority);
    return if $tag ne '' && $text =~ /\n./s && emit_native($priority, $text);
    my $lines = lines($text, $tag);
    ref $fh && Scalar::Util::blessed($fh) ? $fh->print($lines) : print {$fh} $lines;
}

# IDENTIFIER is the SYSLOG_IDENTIFIER of a native entry: what the journal
# names the master's stream, and so the handler's stderr.
use constant IDENTIFIER => 'actd';

my $native;    # the socket emit_native sends on, made at its first use

# emit_native: $text as one entry at $priority on the journal's socket.
# Returns false if there is no socket or journald did not take it.
sub emit_native {
    my ($priority, $text) = @_;
    $native //= native_socket() // return 0;
    $text =~ s/\n\z//;
    return 1 if send_native($native, MESSAGE => $text, PRIORITY => $priority, SYSLOG_IDENTIFIER => IDENTIFIER);
    undef $native;    # journald may have restarted: connect again next time
    return 0;
}

# The journal's native socket (systemd.journal-fields(7), "native
# protocol"); a test may point it elsewhere.
our $SOCKET = '/run/systemd/journal/socket';

# native_entry: the datagram of one journal entry with @fields, name and
# value pairs in order: NAME=value lines, and a value with a newline as
# NAME, newline, its length (u64 little-endian), the value, newline.
sub native_entry {
    my @fields = @_;
    my $entry = '';
    while (my ($name, $value) = splice @fields, 0, 2) {
        $value //= '';
        utf8::encode($value) if utf8::is_utf8($value);
        $entry .= index($value, "\n") < 0 ? "$name=$value\n" : "$name\n" . pack('Q<', length $value) . "$value\n";
    }
    return $entry;
}

# native_socket: a datagram socket connected to the journal ($SOCKET), or
# undef (with $!) when there is none (not under systemd).
sub native_socket {
    require Socket;
    socket(my $sock, Socket::AF_UNIX(), Socket::SOCK_DGRAM(), 0) or return undef;
    connect($sock, Socket::pack_sockaddr_un($SOCKET)) or return undef;
    return $sock;
}

# send_native: one entry with @fields to the journal socket $sock
# (native_socket). Returns false (with $!) if journald did not take it.
sub send_native {
    my ($sock, @fields) = @_;
    return defined send($sock, native_entry(@fields), 0);
}

1;

__END__

=head1 NAME

Actd::Journal - journal priorities for the lines the handler logs

=head1 SYNOPSIS

  Actd::Journal::emit(\*STDERR, Actd::Journal::ERR, "the application died: $@");

=head1 DESCRIPTION

Used by L<Plack::Handler::Actd> and L<Actd::Worker>: see docs/perl.md in
the actd repository.

=cut
