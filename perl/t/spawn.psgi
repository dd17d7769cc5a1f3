# An application that starts a program in the background with fork and
# exec, which pass on every fd not marked close-on-exec, and answers its
# PID (perl/grandchild_test.go).
use strict;
use warnings;
use POSIX ();

sub {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        exec 'sleep', '60' or POSIX::_exit(127);
    }
    return [ 200, [ 'Content-Type' => 'text/plain' ], [$pid] ];
};
