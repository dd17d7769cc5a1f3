#!/usr/bin/perl
# suite.t: Plack's own server test suite (Plack::Test::Suite, Debian
# libplack-perl) against Plack::Handler::Actd, each case a request to a real
# actd running `plackup -s Actd t/suite.psgi`.
#
#   ACTD=/path/to/actd ACTD_TEST_MODE=dispatch prove perl/t/suite.t
#
# ACTD is the actd binary (required); ACTD_TEST_MODE the accept mode,
# dispatch (the default) or exclusive. perl/perl_test.go runs it in both.
# ACTD_TEST_FILTER, if set, is actd's --accept-filter (dispatch mode).
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Spec;
use Test::More;
use Plack::Test::Suite;

my $actd = $ENV{ACTD} or plan skip_all => 'set ACTD to the actd binary to test with';
my $mode = $ENV{ACTD_TEST_MODE} || 'dispatch';
my @filter = $ENV{ACTD_TEST_FILTER} ? ('--accept-filter', $ENV{ACTD_TEST_FILTER}) : ();    # data or http
my $here = File::Spec->rel2abs(dirname(__FILE__));
my $lib  = File::Spec->catdir($here, File::Spec->updir, 'lib');
my ($plackup) = grep { -x } map { "$_/plackup" } split /:/, $ENV{PATH} // '';
$plackup or plan skip_all => 'plackup not found (Debian package libplack-perl)';

Plack::Test::Suite->run_server_tests(sub {
    my ($port) = @_;    # the suite's application is built by each child from suite.psgi
    $ENV{PERL5LIB} = join ':', $lib, grep { defined && length } $ENV{PERL5LIB};
    exec $actd, '--listen', "127.0.0.1:$port", '--accept', $mode, '--log-format', 'text', @filter,
        '--', $^X, $plackup, '-s', 'Actd', '-E', 'test', File::Spec->catfile($here, 'suite.psgi');
    die "exec $actd: $!";
});

done_testing;
