#!/usr/bin/perl
# journal.t: Actd::Journal::emit's rule (docs/perl.md, "Errors"): on a
# stream that is not the journal, plain lines; on the journal's stream
# (JOURNAL_STREAM names it), one line with a "<N>" prefix, and text of
# several lines as ONE native entry at that priority (a datagram socket
# plays journald); without a journal socket, the prefixed lines after all.
#
#   prove -Iperl/lib perl/t/journal.t
use strict;
use warnings;
use Test::More;
use File::Temp ();
use Socket qw(AF_UNIX SOCK_DGRAM pack_sockaddr_un);
use Actd::Journal;

my $dir = File::Temp::tempdir(CLEANUP => 1);

# written: what emit writes to a fresh file (as stderr), with
# JOURNAL_STREAM naming that file when $journal is true.
sub written {
    my ($journal, $priority, $text) = @_;
    open my $fh, '+>', "$dir/stderr" or die "open: $!";
    $fh->autoflush(1);
    my ($dev, $ino) = stat $fh;
    local $ENV{JOURNAL_STREAM} = $journal ? "$dev:$ino" : '';
    Actd::Journal::emit($fh, $priority, $text);
    seek $fh, 0, 0;
    local $/;
    return scalar(<$fh>) // '';
}

my $trace = "the application died: boom at app.psgi line 3.\n\tmain::f() called at app.psgi line 5\n";

is(written(0, Actd::Journal::ERR, $trace), $trace, 'not the journal: the lines as they are');
{
    local $Actd::Journal::SOCKET = '/nonexistent';
    is(written(1, Actd::Journal::ERR, "one line"), "<3>one line\n", 'the journal, one line: prefixed');
}

socket(my $journald, AF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
local $Actd::Journal::SOCKET = "$dir/journal";
bind($journald, pack_sockaddr_un($Actd::Journal::SOCKET)) or die "bind: $!";
is(written(1, Actd::Journal::ERR, $trace), '', 'the journal, several lines: nothing on the stream');
my $got = '';
recv($journald, $got, 65536, 0) // die "recv: $!";
my $message = $trace =~ s/\n\z//r;
like($got, qr/^PRIORITY=3$/m, 'one entry at err');
like($got, qr/^SYSLOG_IDENTIFIER=actd$/m, 'named as the master\'s stream');
is(index($got, "MESSAGE\n" . pack('Q<', length $message) . $message . "\n"), 0, 'the whole trace in one MESSAGE');

close $journald;
unlink $Actd::Journal::SOCKET;
is(written(1, Actd::Journal::ERR, $trace), join('', map {"<3>$_\n"} split /\n/, $trace),
    'the journal socket gone: the prefixed lines after all');

done_testing;
