# The application perl/perl_test.go serves under actd with
# `plackup -s Actd`: one route per behaviour the test checks. Every answer
# names the child's pid, so a test sees which process served it.
use strict;
use warnings;
use Time::HiRes ();

my %route = (
    # /hello: a fixed answer, Content-Length computed by the handler
    '/hello' => sub { [ 200, [ 'Content-Type' => 'text/plain' ], ["hello pid=$$\n"] ] },

    # /echo: the request body back, with what the handler said of it
    '/echo' => sub {
        my ($env) = @_;
        my $input = $env->{'psgi.input'};
        my $body  = do { local $/; <$input> } // '';
        return [ 200, [ 'Content-Type' => 'text/plain', 'X-Length' => $env->{CONTENT_LENGTH} // 'none',
            'X-Buffered' => $env->{'psgix.input.buffered'} ? 1 : 0 ], [$body] ];
    },

    # /stream: a streaming response of three writes, length unknown
    '/stream' => sub {
        return sub {
            my $writer = shift->([ 200, [ 'Content-Type' => 'text/plain' ] ]);
            $writer->write("part $_;") for 1 .. 3;
            $writer->close;
        };
    },

    # /delayed: a delayed response, body known
    '/delayed' => sub {
        return sub { shift->([ 200, [ 'Content-Type' => 'text/plain' ], ["delayed pid=$$\n"] ]) };
    },

    # /sleep?ms=N (and /sleep/ANYTHING): busy for N milliseconds (at most 5000)
    '/sleep' => sub {
        my ($env) = @_;
        my ($ms) = ($env->{QUERY_STRING} =~ /ms=([0-9]+)/);
        Time::HiRes::sleep(($ms > 5000 ? 5000 : $ms) / 1000);
        return [ 200, [ 'Content-Type' => 'text/plain' ], ["slept pid=$$\n"] ];
    },

    # /harakiri: answer, then ask the handler to end this child
    '/harakiri' => sub {
        my ($env) = @_;
        $env->{'psgix.harakiri.commit'} = 1;
        return [ 200, [ 'Content-Type' => 'text/plain' ], ["harakiri pid=$$\n"] ];
    },

    # /address: the server's address and the client's, as the handler saw them
    '/address' => sub {
        my ($env) = @_;
        return [ 200, [ 'Content-Type' => 'text/plain' ],
            ["$env->{SERVER_NAME} $env->{SERVER_PORT} $env->{REMOTE_ADDR}\n"] ];
    },

    # /client: the client's address and port and the URL scheme, as the handler saw them
    '/client' => sub {
        my ($env) = @_;
        return [ 200, [ 'Content-Type' => 'text/plain' ],
            [ join(' ', $env->{REMOTE_ADDR}, $env->{REMOTE_PORT} // '-', $env->{'psgi.url_scheme'}) . "\n" ] ];
    },

    # /die: the application dies; the handler answers 500
    '/die' => sub { die "dying on purpose\n" },
);

sub {
    my ($env) = @_;
    my $handler = $route{ $env->{PATH_INFO} =~ s{\A/sleep/.*}{/sleep}sr }
        // return [ 404, [ 'Content-Type' => 'text/plain' ], ["no route $env->{PATH_INFO}\n"] ];
    return $handler->($env);
};
