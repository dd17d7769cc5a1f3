#!/usr/bin/perl
# accesslog.t: the access log (docs/perl.md, "Access log"): each format
# directive, the default format, the journal entry's fields (a datagram
# socket plays journald), stderr when there is no journal, and fd:N.
#
#   prove -Iperl/lib perl/t/accesslog.t
use strict;
use warnings;
use Test::More;
use File::Temp ();
use POSIX ();
use Socket qw(AF_UNIX SOCK_DGRAM pack_sockaddr_un);
use Actd::AccessLog;
use Actd::Journal;

$ENV{TZ} = 'UTC';
POSIX::tzset();

my %record = (
    remote_addr => '192.0.2.7', method => 'GET', path => '/a/b', query => 'token=secret', protocol => 'HTTP/1.1',
    status => 200, bytes => 1234, duration_us => 2500000, time => 971185536,
    env => { HTTP_REFERER => 'http://r/', HTTP_USER_AGENT => 'curl/8', CONTENT_TYPE => 'text/plain', HTTP_X_ONE => '1' },
);

# log_with: an Actd::AccessLog for ACTD_ACCESS_LOG $where and format $format.
sub log_with {
    my ($where, $format) = @_;
    local $ENV{ACTD_ACCESS_LOG} = $where;
    local $ENV{ACTD_ACCESS_LOG_FORMAT} = $format;
    delete local $ENV{ACTD_ACCESS_LOG_FORMAT} if !defined $format;
    return Actd::AccessLog->new;
}

my $stderr_log = do { local $ENV{ACTD_ACCESS_LOG} = 'journal'; local $Actd::Journal::SOCKET = '/nonexistent'; Actd::AccessLog->new };

for my $tc (
    [ '%h', '192.0.2.7' ], [ '%l %u', '- -' ], [ '%t', '[10/Oct/2000:13:45:36 +0000]' ],
    [ '%r', 'GET /a/b HTTP/1.1' ], [ '%m', 'GET' ], [ '%U', '/a/b' ], [ '%q', '?token=secret' ],
    [ '%H', 'HTTP/1.1' ], [ '%s %>s', '200 200' ], [ '%b', '1234' ], [ '%B', '1234' ],
    [ '%D', '2500000' ], [ '%T', '2' ], [ '%P', "$$" ], [ '100%%', '100%' ],
    [ '%{Referer}i %{user-agent}i', 'http://r/ curl/8' ], [ '%{Content-Type}i', 'text/plain' ],
    [ '%{X-None}i', '-' ], [ '%{X-One}i', '1' ], [ '%Z stays', '%Z stays' ], [ 'plain', 'plain' ],
) {
    my ($format, $want) = @$tc;
    is log_with('journal', $format)->line(\%record), $want, "format $format";
}

is log_with('journal', '%b')->line({ %record, bytes => 0 }), '-', '%b of no body is -';
is log_with('journal', '%q')->line({ %record, query => '' }), '', '%q of no query is empty';
is log_with('journal')->line(\%record),
    '192.0.2.7 - - [10/Oct/2000:13:45:36 +0000] "GET /a/b HTTP/1.1" 200 1234 "http://r/" "curl/8" 2500000',
    'the default format: Combined plus %D, no query string';

subtest 'journal: one native entry with its fields' => sub {
    my $dir = File::Temp->newdir;
    local $Actd::Journal::SOCKET = "$dir/journal";
    socket(my $journald, AF_UNIX, SOCK_DGRAM, 0) or die;
    bind($journald, pack_sockaddr_un($Actd::Journal::SOCKET)) or die "bind: $!";
    log_with('journal')->log(\%record);
    defined recv($journald, my $entry, 65536, 0) or die "recv: $!";
    my %got = map { split /=/, $_, 2 } split /\n/, $entry;
    is_deeply [ @got{qw(PRIORITY HTTP_STATUS HTTP_METHOD HTTP_PATH HTTP_BYTES HTTP_DURATION_US REMOTE_ADDR SYSLOG_IDENTIFIER)} ],
        [ 6, 200, 'GET', '/a/b', 1234, 2500000, '192.0.2.7', 'accesslog.t' ], 'fields';
    like $got{MESSAGE}, qr{\A192\.0\.2\.7 - - \[.*\] "GET /a/b HTTP/1\.1" 200 1234 }, 'MESSAGE: the line';
    unlike $entry, qr/secret/, 'no query string';
};

is Actd::Journal::native_entry(A => "x\ny", B => 'z'), "A\n" . pack('Q<', 3) . "x\ny\nB=z\n", 'a value with a newline is sized';

subtest 'no journal socket: stderr' => sub {
    my $file = File::Temp->new;
    open(my $saved, '>&', \*STDERR) or die;
    open(STDERR, '>', $file->filename) or die;
    $stderr_log->log(\%record);
    open(STDERR, '>&', $saved) or die;
    open(my $in, '<', $file->filename) or die;
    my @lines = <$in>;
    is scalar @lines, 1, 'one line';
    like $lines[0], qr{"GET /a/b HTTP/1\.1" 200 }, 'the formatted line';
};

subtest 'fd:N: one write per line' => sub {
    pipe(my $r, my $w) or die;
    my $log = log_with('fd:' . fileno($w), '%m %U %s');
    $log->log(\%record);
    $log->log({ %record, status => 404 });
    close $w;
    undef $log;
    my @lines = <$r>;
    is_deeply \@lines, [ "GET /a/b 200\n", "GET /a/b 404\n" ], 'lines';
};

ok !defined log_with(''), 'ACTD_ACCESS_LOG empty: no log';
ok !eval { log_with('syslog'); 1 }, 'ACTD_ACCESS_LOG=syslog: dies';
like $@, qr/ACTD_ACCESS_LOG/, 'naming the variable';

done_testing;
