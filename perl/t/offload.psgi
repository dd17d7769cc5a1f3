# The application of perl/offload_test.go (write completion):
#
#   /bytes   BODY as a one-element array
#   /file    BODY from a regular file (unlinked), as a file handle
#   /echo    the method, path and query
#
# BODY is 1 MiB, byte i being (131 i + int(i / 1024)) mod 256: the test
# computes its checksum the same way.
use strict;
use warnings;
use File::Temp ();

my $size = 1 << 20;
my $body = pack 'C*', map { (131 * $_ + ($_ >> 10)) & 0xff } 0 .. $size - 1;
my $file = File::Temp->new(UNLINK => 1);
binmode $file;
print {$file} $body;
$file->flush;

sub {
    my ($env) = @_;
    my $path = $env->{PATH_INFO};
    return [ 200, [ 'Content-Type' => 'application/octet-stream' ], [$body] ] if $path eq '/bytes';
    if ($path eq '/file') {
        open(my $fh, '<', $file->filename) or die "open: $!";
        binmode $fh;
        return [ 200, [ 'Content-Type' => 'application/octet-stream' ], $fh ];
    }
    my $text = "$env->{REQUEST_METHOD} $path $env->{QUERY_STRING} ";
    return [ 200, [ 'Content-Type' => 'text/plain', 'Content-Length' => length $text ], [$text] ];
};
