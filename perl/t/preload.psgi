# The application perl/preload_test.go serves under actd --preload: 30 MB
# made when plackup loads it (written, so resident: pages a fork shares).
# Every answer names the process that loaded it and the one that serves.
use strict;
use warnings;

my $ballast = 'x' x (30 << 20);
my $loaded_by = $$;

sub {
    my $body = "loaded $loaded_by served $$ ballast " . length($ballast) . "\n";
    [ 200, [ 'Content-Type' => 'text/plain' ], [$body] ];
};
