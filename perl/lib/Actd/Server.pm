package Actd::Server;

# Actd::Server: the HTTP server of one actd child, which
# Plack::Handler::Actd (`plackup -s Actd app.psgi`) runs with the
# application, as Starman::Server is Plack::Handler::Starman's. actd owns
# the listening sockets and the pool; the server speaks the back-channel
# protocol through Actd::Worker and serves one connection at a time:
# HTTP/1.0 and 1.1, keep-alive and pipelining, Content-Length and chunked
# request bodies (buffered: psgix.input.buffered), Expect: 100-continue,
# HEAD, delayed and streaming responses (psgi.streaming), 400 and friends
# for malformed requests. Its messages start "Plack::Handler::Actd:", the
# name operators know from plackup's -s.

use strict;
use warnings;
use Actd::HTTP qw(HEAD_LIMIT CHUNK_LINE_LIMIT skip_empty_lines head_status partial_status codings_status length_status chunk_size
    field_line_ok);
use Actd::Worker;
use Actd::Exact;
use Actd::Journal;
use Actd::Offload;
use Actd::AccessLog;
use Actd::TLS;
use Carp ();
use HTTP::Status ();
use Plack::HTTPParser qw(parse_http_request);
use Plack::Util;
use Errno qw(EINTR);
use Socket qw(IPPROTO_TCP TCP_NODELAY SOL_SOCKET SO_RCVTIMEO SO_SNDTIMEO
    AF_INET AF_INET6 sockaddr_family unpack_sockaddr_in unpack_sockaddr_in6 inet_ntop);
use Time::HiRes ();

our $VERSION = '0.1.0';

use constant {
    CRLF         => "\015\012",
    READ_SIZE    => 65536,
    REPORT_AFTER => 0.005,     # seconds of keep-alive wait before the request text is cleared
};

# The defaults are Starman's, so an operator's numbers mean the same.
my %DEFAULTS = (
    keepalive_timeout => 1,    # seconds to wait for the next request on a connection
    read_timeout      => 5,    # seconds for a request's head, and for each read or write
);

# Reason phrases RFC 9110 names otherwise than this HTTP::Status does.
my %REASON = (413 => 'Content Too Large');

# reason: the reason phrase of $status, or undef for an unknown one.
sub reason { $REASON{ $_[0] } // HTTP::Status::status_message($_[0]) }

my $NULL_INPUT = do { open(my $fh, '<', \'') or die; $fh };

# new: the server, from plackup's options. host, port, listen and socket
# are ignored: actd owns the sockets.
sub new {
    my ($class, %args) = @_;
    # plackup turns --disable-keepalive into keepalive => 0
    my %self = (%DEFAULTS, keepalive => ($args{keepalive} // 1) && !$args{disable_keepalive});
    for my $name (keys %DEFAULTS) {
        next unless defined $args{$name};
        $args{$name} =~ /\A[0-9]+(?:\.[0-9]+)?\z/ && $args{$name} > 0
            or die "Plack::Handler::Actd: --" . ($name =~ tr/_/-/r) . " $args{$name}: want seconds > 0\n";
        $self{$name} = $args{$name};
    }
    $self{max_request_body} = max_request_body();
    my $forwarded = $args{forwarded_allow_ips} // $ENV{ACTD_FORWARDED_ALLOW_IPS} // '';
    if ($forwarded =~ /\S/) {    # trusted X-Forwarded-For and -Proto
        require Actd::Proxy;
        $self{forwarded} = Actd::Proxy::networks($forwarded, '--forwarded-allow-ips');
    }
    return bless \%self, $class;
}

# max_request_body: the largest request body in bytes, from
# ACTD_MAX_REQUEST_BODY (actd's --max-request-body); undef when it is
# absent or 0 (no limit, as --max-request-body 0). Dies naming the variable for a value that is not a
# number of bytes.
sub max_request_body {
    my $max = $ENV{ACTD_MAX_REQUEST_BODY} // return undef;
    $max =~ /\A[0-9]{1,18}\z/
        or die "Plack::Handler::Actd: ACTD_MAX_REQUEST_BODY=\"$max\": want a number of bytes\n";
    return $max > 0 ? $max + 0 : undef;
}

# run: serve $app in this actd child until the master drains it or goes
# away. Dies when not run by actd.
sub run {
    my ($self, $app) = @_;
    if (($ENV{ACTD_ROLE} // '') eq 'zygote') {    # --preload: the app is loaded, fork children from here
        require Actd::Zygote;
        return Actd::Zygote->serve(sub { $self->run($app) });
    }
    my $worker = Actd::Worker->new;
    $self->{worker} = $worker;
    $self->{access_log} = Actd::AccessLog->new;    # undef: none
    $self->{tls} = Actd::TLS::contexts($worker->tls);    # listener index => server context
    $self->{app}    = $app;
    local $SIG{PIPE} = 'IGNORE';    # a client that went away is an EPIPE
    local $SIG{INT}  = 'IGNORE';    # ^C reaches the whole group: the master drains us
    local $SIG{QUIT} = sub { $self->dump_stack };
    $self->{timeval} = pack 'l!l!', int $self->{read_timeout},
        ($self->{read_timeout} - int $self->{read_timeout}) * 1e6;
    $worker->run(sub { $self->serve_connection(@_) });
}

# dump_stack: actd's answer to --busy-timeout (SIGQUIT): the stack of the
# request in hand to stderr (the journal), then exit as a Go worker does.
sub dump_stack {
    my ($self) = @_;
    my $request = $self->{request} // 'no request';
    complain(Carp::longmess("Plack::Handler::Actd: SIGQUIT while serving \"$request\", pid $$"));
    require POSIX;
    POSIX::_exit(2);
}

# serve_connection: the requests of one connection, until it closes, fails,
# or keep-alive ends.
sub serve_connection {
    my ($self, $conn, $peer, $index) = @_;
    setsockopt($conn, IPPROTO_TCP, TCP_NODELAY, 1);    # fails harmlessly on unix sockets
    setsockopt($conn, SOL_SOCKET, $_, $self->{timeval}) for SO_RCVTIMEO, SO_SNDTIMEO;
    my $tls = $self->{tls}{$index};
    if ($tls) {    # the PROXY header, if any, was read: the ClientHello comes next
        Actd::TLS::start($conn, $tls) or return;    # a failed or slow handshake: closed
    }
    my $c = { conn => $conn, buf => '', base => connection_env($conn, $self->client($peer), $self->server_address($conn, $index)),
        alive => 1, exact => $self->{worker}->parkable, next => 0 };
    $c->{base}{'psgi.url_scheme'} = 'https' if $tls;
    while (1) {
        my $env = $self->read_request($c);
        if (!ref $env) {
            $self->error_response($c, $env) if $env > 0;
            return;
        }
        $self->respond($c, $env);
        delete $self->{request};
        return if !$c->{keepalive} || !$c->{alive};
        return if $c->{exact} && !Actd::Exact::whole($c->{buf});    # part of a next request read (a long chunked body)
        return if $c->{buf} eq '' && !$self->await_request($c);
        $c->{next} = 1;
    }
}

# server_address: SERVER_NAME and SERVER_PORT of $conn, which came from
# listener $index: that listener's own address, asked once, unless it is a
# wildcard (0.0.0.0, ::), where only the connection knows it.
sub server_address {
    my ($self, $conn, $index) = @_;
    my $fixed = $self->{server_address}[$index] //= do {
        my @address = address(getsockname($self->{worker}->listener($index)));
        $address[0] eq '0.0.0.0' || $address[0] eq '::' ? [] : \@address;
    };
    return @$fixed ? @$fixed : address(getsockname($conn));
}

# client: the client's host and port: those a PROXY header gave
# (Actd::Worker::address), else those of the socket's peer $peer.
sub client {
    my ($self, $peer) = @_;
    my $proxied = $self->{worker}->address;
    if (defined $proxied) {
        require Actd::Proxy;
        my @client = Actd::Proxy::split_address($proxied);
        return @client if @client;
    }
    return address($peer);
}

# forwarded: under ACTD_FORWARDED_ALLOW_IPS, for a request whose
# REMOTE_ADDR (after PROXY) is in it: REMOTE_ADDR becomes the rightmost
# X-Forwarded-For entry not itself in the list (the leftmost if all are),
# and psgi.url_scheme follows X-Forwarded-Proto (http or https).
sub forwarded {
    my ($self, $env) = @_;
    my $nets = $self->{forwarded} or return;
    return if !Actd::Proxy::contains($nets, $env->{REMOTE_ADDR});
    my @hops = grep { length } map { s/\A\s+|\s+\z//gr } split /,/, $env->{HTTP_X_FORWARDED_FOR} // '';
    if (@hops) {
        my ($client) = grep { !Actd::Proxy::contains($nets, $_) } reverse @hops;
        $env->{REMOTE_ADDR} = $client // $hops[0];
        delete $env->{REMOTE_PORT};
    }
    my $proto = lc($env->{HTTP_X_FORWARDED_PROTO} // '') =~ s/\A\s+|\s+\z//gr;
    $env->{'psgi.url_scheme'} = $proto if $proto eq 'http' || $proto eq 'https';
}

# connection_env: the part of the PSGI environment that is the same for
# every request of the connection.
sub connection_env {
    my ($conn, $remote_addr, $remote_port, $server_name, $server_port) = @_;
    return {
        SERVER_NAME            => $server_name,
        SERVER_PORT            => $server_port,
        REMOTE_ADDR            => $remote_addr,
        REMOTE_PORT            => $remote_port,
        SCRIPT_NAME            => '',
        'psgi.version'         => [ 1, 1 ],
        'psgi.errors'          => *STDERR,
        'psgi.url_scheme'      => 'http',
        'psgi.run_once'        => Plack::Util::FALSE,
        'psgi.multithread'     => Plack::Util::FALSE,
        'psgi.multiprocess'    => Plack::Util::TRUE,
        'psgi.streaming'       => Plack::Util::TRUE,
        'psgi.nonblocking'     => Plack::Util::FALSE,
        'psgix.input.buffered' => Plack::Util::TRUE,
        'psgix.harakiri'       => Plack::Util::TRUE,
        'psgix.io'             => $conn,
    };
}

# address: host and port of a packed socket address; for a unix socket
# ("localhost", 0).
sub address {
    my ($packed) = @_;
    my $family = defined $packed && length $packed >= 2 ? sockaddr_family($packed) : -1;
    if ($family == AF_INET) {
        my ($port, $ip) = unpack_sockaddr_in($packed);
        return (inet_ntop(AF_INET, $ip), $port);
    }
    if ($family == AF_INET6) {
        my ($port, $ip) = unpack_sockaddr_in6($packed);
        return (inet_ntop(AF_INET6, $ip), $port);
    }
    return ('localhost', 0);
}

# await_request: wait up to the keep-alive timeout for the client's next
# request (under an accept filter, for a connection the master handed over
# or one the child screened itself, 1 ms: then it goes back to the master,
# Actd::Worker::await_handed). Returns true if the client sent something,
# false on a timeout; a wait that lasts more than REPORT_AFTER clears the
# request text in `actd status`. The master may speak meanwhile: see
# await_either.
sub await_request {
    my ($self, $c) = @_;
    $self->{worker}->lasts;    # a connection that waits is no short one
    my $handed = $self->{worker}->await_handed($c->{conn});    # under an accept filter
    return $handed if defined $handed;
    return 1 if UNIVERSAL::isa($c->{conn}, 'IO::Socket::SSL') && $c->{conn}->pending;    # TLS: read, not yet taken
    return $self->await_either($c);
}

# await_either: wait, up to the keep-alive timeout in all, for the client
# of $c or the master. What the master says that the worker hears
# (Actd::Worker::heard: a ping, an exclusive-mode "register again") leaves
# the connection as it is, and the wait goes on. Anything else (a drain,
# end of file) makes the request the client has sent already, if any, the
# connection's last: returns whether there is one. Returns true when the
# client has sent something, false on a timeout or an error.
sub await_either {
    my ($self, $c) = @_;
    my $client  = fileno $c->{conn};
    my $channel = fileno $self->{worker}->channel;
    my $in      = '';
    vec($in, $client,  1) = 1;
    vec($in, $channel, 1) = 1;
    my $start   = Time::HiRes::time();
    my $cleared = 0;
    while (1) {
        my $waited = Time::HiRes::time() - $start;
        return 0 if $waited >= $self->{keepalive_timeout};
        if (!$cleared && $waited >= REPORT_AFTER) {
            $self->{worker}->report('');
            $cleared = 1;
        }
        my $until = $cleared ? $self->{keepalive_timeout} : REPORT_AFTER;
        $until = $self->{keepalive_timeout} if $until > $self->{keepalive_timeout};
        my ($n, $out) = wait_readable($in, $until - $waited);
        return 0 if $n < 0;
        next if !$n;
        return 1 unless vec($out, $channel, 1);
        next if $self->{worker}->heard;
        $c->{last} = 1;
        return vec($out, $client, 1);
    }
}

# wait_readable: select on the fds in $in for $timeout seconds; returns the
# count of ready ones (0 on a timeout, -1 on an error) and their bits.
sub wait_readable {
    my ($in, $timeout) = @_;
    my ($n, $out);
    do { $n = select($out = $in, undef, undef, $timeout) } while $n < 0 && $! == EINTR;
    return ($n, $out);
}

# read_request: the next request's environment, its body read and
# buffered; or a number: the status to answer before closing, or -1 to
# close without an answer (the client closed, or sent nothing in time, or
# the request goes back to the master unread: look).
sub read_request {
    my ($self, $c) = @_;
    return -1 if !$self->look($c);
    my $env = { %{ $c->{base} } };
    @$c{qw(env started bytes status)} = ($env, Time::HiRes::time(), 0, undef);
    my $status = $self->read_head($c, $env);
    return $status if $status;
    $self->forwarded($env) if $self->{forwarded};
    my $proto = $env->{SERVER_PROTOCOL};
    return 505 unless $proto =~ m{\AHTTP/1\.[0-9]\z};
    my $connection = $env->{HTTP_CONNECTION} // '';
    $c->{keepalive} = $self->{keepalive} && !$c->{last}
        && ($proto eq 'HTTP/1.0' ? $connection =~ /\bkeep-alive\b/i : $connection !~ /\bclose\b/i);
    $c->{proto} = $proto eq 'HTTP/1.0' ? $proto : 'HTTP/1.1';
    return 400 if $proto ne 'HTTP/1.0' && !defined $env->{HTTP_HOST};
    if ($env->{PATH_INFO} =~ s{\A[A-Za-z][A-Za-z0-9+.-]*://[^/]*}{}) {    # absolute-form (RFC 9112 3.2.2)
        $env->{PATH_INFO} = '/' if $env->{PATH_INFO} eq '';
    }
    $self->{request} = "$env->{REQUEST_METHOD} " . ($env->{REQUEST_URI} =~ s/\?.*//sr);
    # behind a balancer the client (its PROXY header's) is worth showing, as in Go's
    my $client = $self->{worker}->address;
    $self->{request} .= " from $client" if defined $client;
    $self->{worker}->report($self->{request});
    $status = $self->read_body($c, $env);
    return $status if $status;
    $env->{'psgix.cleanup'}          = Plack::Util::TRUE;
    $env->{'psgix.cleanup.handlers'} = [];
    return $env;
}

# read_head: parse the request line and headers into $env, by the framing
# rules of docs/http.md (Actd::HTTP): empty lines before the request line
# are skipped, a head ends in CRLF CRLF, and one that can no longer be good
# is answered at once. Returns 0, or the status to answer (400 malformed,
# 408 too slow, 414 a long request line, 431 too large, 505 another major
# version than HTTP/1), or -1 when the client closed or sent nothing
# before the read timeout.
sub read_head {
    my ($self, $c, $env) = @_;
    my ($deadline, $skipped) = (undef, 0);
    while (1) {
        if ($c->{buf} ne '') {
            $skipped += skip_empty_lines(\$c->{buf});
            my $end = index $c->{buf}, "\015\012\015\012";
            my $status = $end < 0 ? partial_status($c->{buf}, $skipped)
                : head_status(substr($c->{buf}, 0, $end + 4), $skipped);
            return $status if $status;
            if ($end >= 0) {
                my $length = parse_http_request($c->{buf}, $env);
                return 400 if $length != $end + 4;
                substr($c->{buf}, 0, $length, '');
                return 0;
            }
        }
        $deadline //= Time::HiRes::time() + $self->{read_timeout};
        my $n = $self->fill($c);
        return -1 if !$n && $c->{buf} =~ /\A[\015\012]*\z/;
        return 408 if !defined $n || Time::HiRes::time() > $deadline;
        return 400 if !$n;    # closed in the middle of a request: answer for the log
    }
}

# look: on a connection that may go back to the master, with nothing of
# the next request read: peek, and bound the reads of this request to the
# whole requests the peek shows (Actd::Exact). Returns false when a next
# request is not whole: none of it was read, and the connection goes back
# to the master (K); else true.
sub look {
    my ($self, $c) = @_;
    return 1 if !$c->{exact} || $c->{buf} ne '';
    $c->{left} = Actd::Exact::span($c->{conn}, $c->{next});
    return 1 if ($c->{left} // 0) != Actd::Exact::NOT_WHOLE;
    $self->{worker}->give_back;
    return 0;
}

# fill: read what the client sent into the connection's buffer, at most
# $max bytes (READ_SIZE), and no more than look allows. Returns the byte
# count, 0 at end of file, undef on a timeout or an error.
sub fill {
    my ($self, $c, $max) = @_;
    $max //= READ_SIZE;
    if (defined $c->{left}) {    # none left, yet the framing wants more: read on
        $c->{left} > 0 ? ($max = $c->{left} < $max ? $c->{left} : $max) : delete $c->{left};
    }
    while (1) {
        my $n = sysread($c->{conn}, $c->{buf}, $max, length $c->{buf});
        $c->{left} -= $n if defined $n && defined $c->{left};
        return $n if defined $n;
        return undef if $! != EINTR;
    }
}

# read_body: the request body into psgi.input (seekable, in memory or a
# temporary file), by Content-Length or chunked. Returns 0, the status to
# answer, or -1 when the client went away.
sub read_body {
    my ($self, $c, $env) = @_;
    my $te     = delete $env->{HTTP_TRANSFER_ENCODING};
    my $length = $env->{CONTENT_LENGTH};
    if (defined $te) {
        return 400 if defined $length;    # both: a smuggling attempt (RFC 9112 6.3)
        return 400 if $env->{SERVER_PROTOCOL} eq 'HTTP/1.0';    # faulty framing (RFC 9112 6.1)
        my $status = codings_status($te);
        return $status if $status;
    } elsif (!defined $length) {
        $env->{'psgi.input'} = $NULL_INPUT;
        return 0;
    } else {
        my $status = length_status($length);
        return $status if $status;
        $env->{CONTENT_LENGTH} = $length += 0;
        return 413 if $self->over_limit($length);    # at once, nothing of the body read
        if (!$length) {
            $env->{'psgi.input'} = $NULL_INPUT;
            return 0;
        }
    }
    my $status = $self->expect($c, $env);
    return $status if $status;
    require Stream::Buffered;    # loaded by the first body: a child that gets none saves its memory
    my $buffer = Stream::Buffered->new($length);
    $status = defined $te ? $self->read_chunked($c, $env, $buffer) : $self->copy($c, $length, $buffer);
    return $status if $status;
    $env->{'psgi.input'} = $buffer->rewind;
    return 0;
}

# over_limit: whether a body of $size bytes is over ACTD_MAX_REQUEST_BODY.
sub over_limit {
    my ($self, $size) = @_;
    return defined $self->{max_request_body} && $size > $self->{max_request_body};
}

# expect: answer Expect: 100-continue (HTTP/1.1, body not sent yet);
# returns 417 for any other expectation, else 0.
sub expect {
    my ($self, $c, $env) = @_;
    my $expect = delete $env->{HTTP_EXPECT} // return 0;
    return 417 if lc $expect ne '100-continue';
    $self->write_all($c, "HTTP/1.1 100 Continue" . CRLF . CRLF)
        if $env->{SERVER_PROTOCOL} eq 'HTTP/1.1' && $c->{buf} eq '';
    return 0;
}

# copy: $length bytes of body into $buffer. Returns 0, or -1 when the
# client closed or stalled.
sub copy {
    my ($self, $c, $length, $buffer) = @_;
    while ($length > 0) {
        if ($c->{buf} eq '') {
            return -1 if !$self->fill($c, $length < READ_SIZE ? $length : READ_SIZE);
        }
        my $take = length $c->{buf} < $length ? length $c->{buf} : $length;
        $buffer->print(substr($c->{buf}, 0, $take, ''));
        $length -= $take;
    }
    return 0;
}

# read_chunked: a chunked body (RFC 9112 7.1) into $buffer; the trailer
# fields are read and dropped. Sets CONTENT_LENGTH to the decoded size.
# Returns 0, 400 for a malformed body, 413 for one that grows past
# ACTD_MAX_REQUEST_BODY (nothing of the chunk that would pass it is read
# or spooled), or -1 when the client went away.
sub read_chunked {
    my ($self, $c, $env, $buffer) = @_;
    my $total = 0;
    while (1) {
        my $line = $self->read_line($c, CHUNK_LINE_LIMIT);
        return $line if !ref $line;
        my $size = chunk_size($$line) // return 400;
        last if !$size;
        return 413 if $self->over_limit($total + $size);
        my $status = $self->copy($c, $size, $buffer);
        return $status if $status;
        my $end = $self->read_line($c, 0);
        return $end if !ref $end;
        return 400 if $$end ne '';
        $total += $size;
    }
    my $trailers = 0;
    while (1) {    # trailer fields, up to the empty line, within HEAD_LIMIT
        my $line = $self->read_line($c, HEAD_LIMIT);
        return $line if !ref $line;
        last if $$line eq '';
        return 400 if !field_line_ok($$line);
        return 431 if ($trailers += length($$line) + 2) > HEAD_LIMIT;
    }
    $env->{CONTENT_LENGTH} = $total;
    return 0;
}

# read_line: a reference to the next line without its CRLF, or a number:
# 400 for a line longer than $limit bytes or ending in a bare LF, -1 when
# the client closed or stalled.
sub read_line {
    my ($self, $c, $limit) = @_;
    while (1) {
        my $end = index $c->{buf}, "\012";
        return 400 if ($end < 0 ? length $c->{buf} : $end) > $limit + 1;
        if ($end >= 0) {
            my $line = substr($c->{buf}, 0, $end + 1, '');
            $line =~ s/\015\012\z// or return 400;
            return \$line;
        }
        return -1 if !$self->fill($c);
    }
}

# respond: run the application and send its response. A delayed response
# (a code reference) is given a responder; a streaming one a writer.
sub respond {
    my ($self, $c, $env) = @_;
    my $res = eval { $self->{app}->($env) };
    if (!$res) {
        $self->internal_error($c, $env, $@ ne '' ? "the application died: $@" : "the application returned no response");
    } elsif (ref $res eq 'CODE') {
        $self->delayed($c, $env, $res);
    } elsif (ref $res eq 'ARRAY') {
        $self->write_response($c, $env, $res);
    } else {
        $self->internal_error($c, $env, "the application returned \"$res\": want an array or a code reference");
    }
    if ($env->{'psgix.harakiri.commit'}) {
        $c->{keepalive} = 0;
        $self->{worker}->stop;
    }
    $self->access($c, $env);
    for my $handler (@{ $env->{'psgix.cleanup.handlers'} }) {
        eval { $handler->($env); 1 } or complain("Plack::Handler::Actd: cleanup handler: $@");
    }
}

# access: log the request of $env, answered on $c, to the access log if
# there is one (Actd::AccessLog): what was sent of the body, how long it
# took from the start of its head, the client's address; and count it
# for the master's metrics (Actd::Worker::tally), log or not.
sub access {
    my ($self, $c, $env) = @_;
    my $now = Time::HiRes::time();
    $self->{worker}->tally($c->{status}, int(($now - ($c->{started} // $now)) * 1e6)) if defined $c->{status};
    my $log = $self->{access_log} // return;
    $log->log({ remote_addr => $env->{REMOTE_ADDR}, method => $env->{REQUEST_METHOD} // '-',
        path => ($env->{REQUEST_URI} // '-') =~ s/\?.*//sr, query => $env->{QUERY_STRING} // '',
        protocol => $env->{SERVER_PROTOCOL} // '-', status => $c->{status} // '-', bytes => $c->{bytes} // 0,
        duration_us => int(($now - ($c->{started} // $now)) * 1e6), time => $now, env => $env });
}

# delayed: a delayed or streaming response. An application that dies or
# returns before it responds gets a 500; a writer left open is closed and
# ends the connection.
sub delayed {
    my ($self, $c, $env, $res) = @_;
    my $writer;
    my $ok = eval {
        $res->(sub { $c->{responded} = 1; $writer = $self->write_response($c, $env, $_[0]) });
        1;
    };
    my $responded = delete $c->{responded};
    if (!$ok || !$responded) {
        my $why = $ok ? "the application did not respond" : "the application died: $@";
        return $self->internal_error($c, $env, $why) if !$responded;
        complain("Plack::Handler::Actd: $why");
        $c->{alive} = 0;    # the response is cut short
    }
    if ($writer && !$writer->{closed}) {
        $writer->close;
        $c->{keepalive} = 0;
    }
}

# internal_error: log $why to psgi.errors (at priority err in the
# journal: Actd::Journal) and answer 500 if nothing was sent yet.
sub internal_error {
    my ($self, $c, $env, $why) = @_;
    Actd::Journal::emit($env->{'psgi.errors'}, Actd::Journal::ERR, "Plack::Handler::Actd: error serving " . ($env->{REQUEST_METHOD} // '') . ' ' . (($env->{REQUEST_URI} // '') =~ s/\?.*//sr) . ": $why");    # no query: it may carry secrets
    $self->write_response($c, $env,
        [ 500, [ 'Content-Type' => 'text/plain', 'Content-Length' => 21 ], ['Internal Server Error'] ]);
}

# error_response: answer a request that could not be read, then close
# (our sending side first, so that a client still sending a body it was
# refused reads the answer before the close).
sub error_response {
    my ($self, $c, $status) = @_;
    my $text = reason($status) // 'Error';
    $c->{keepalive} = 0;
    $c->{proto} //= 'HTTP/1.1';
    $self->write_response($c, { REQUEST_METHOD => 'GET' },
        [ $status, [ 'Content-Type' => 'text/plain', 'Content-Length' => length $text ], [$text] ]);
    shutdown($c->{conn}, 1) if $c->{alive};
    $self->access($c, $c->{env}) if $c->{env};
}

# write_response: send the status line, headers and body of $res. With no
# body, returns the writer of a streaming response. The body is cut for
# HEAD, 1xx, 204 and 304; a body of unknown length is chunked (HTTP/1.1) or
# ends the connection (HTTP/1.0).
sub write_response {
    my ($self, $c, $env, $res) = @_;
    my ($status, $headers, $body) = @$res;
    my $proto = $c->{proto};
    $c->{status} = $status;
    my $head  = "$proto $status " . (reason($status) // 'Unknown') . CRLF;
    my ($length, $chunked, $date);
    for (my $i = 0; $i < @$headers; $i += 2) {
        my $name = lc $headers->[$i];
        next if $name eq 'connection';
        $length  = 1 if $name eq 'content-length';
        $chunked = 1 if $name eq 'transfer-encoding' && lc($headers->[ $i + 1 ]) eq 'chunked';
        $date    = 1 if $name eq 'date';
        $head .= "$headers->[$i]: $headers->[$i + 1]" . CRLF;
    }
    my $bodiless = $status < 200 || $status == 204 || $status == 304;
    my $file = !$bodiless && $env->{REQUEST_METHOD} ne 'HEAD' && !$chunked && $self->offloadable($c) && file_body($body);
    if ($file && !$length) {    # a file's length is known: no need to chunk it
        $head .= 'Content-Length: ' . $file->{length} . CRLF;
        $length = 1;
    }
    my $data;
    if (!$bodiless && ref $body eq 'ARRAY') {
        $data = join '', @$body;
        if ($data =~ /[^\x00-\xff]/) {
            Actd::Journal::emit(\*STDERR, Actd::Journal::WARNING,
                Carp::shortmess("Wide character in response body: encoding it as UTF-8"));
            utf8::encode($data);
        }
        $head .= 'Content-Length: ' . length($data) . CRLF if !$length && !$chunked;
        $length = 1;
    }
    if (!$bodiless && !$length && !$chunked) {
        if ($proto eq 'HTTP/1.1') {
            $chunked = 1;
            $head .= 'Transfer-Encoding: chunked' . CRLF if $env->{REQUEST_METHOD} ne 'HEAD';
        } else {
            $c->{keepalive} = 0;
        }
    }
    $head .= 'Date: ' . http_date() . CRLF if !$date;
    $head .= $c->{keepalive} ? ($proto eq 'HTTP/1.0' ? 'Connection: keep-alive' . CRLF : '') : 'Connection: close' . CRLF;
    $head .= CRLF;
    my $send_body = !$bodiless && $env->{REQUEST_METHOD} ne 'HEAD';
    $chunked = 0 if !$send_body;
    if (defined $data) {
        $c->{bytes} += length $data if $send_body;
        $self->write_last($c, $send_body ? $head . ($chunked ? chunk($data) . "0" . CRLF . CRLF : $data) : $head);
        return;
    }
    $self->write_all($c, $head);
    if ($file) {
        $self->write_file_last($c, $file, content_length($headers));
        ref $body eq 'GLOB' ? close $body : $body->close;
        return;
    }
    my $writer = Actd::Server::Writer->new($self, $c, $chunked, $send_body);
    return $writer if !defined $body;
    Plack::Util::foreach($body, sub { $writer->write($_[0]) });
    $writer->close;
    return;
}

# offloadable: whether the rest of a response on $c may go to the master
# (W): the worker would take it (Actd::Worker::offloads) and nothing of
# the next request has been read.
sub offloadable {
    my ($self, $c) = @_;
    return $c->{alive} && $c->{buf} eq '' && $self->{worker} && $self->{worker}->offloads > 0;
}

# file_body: for a body that is a real file handle on a regular file, {
# fh, offset (its position), length (the bytes after it) }; else undef.
sub file_body {
    my ($body) = @_;
    return undef if !ref $body || ref $body eq 'ARRAY' || !Plack::Util::is_real_fh($body) || !-f $body;
    my $offset = tell $body;
    my $size   = -s _;
    return undef if $offset < 0 || $offset > $size;
    return { fh => $body, offset => $offset, length => $size - $offset };
}

# content_length: the value of the Content-Length among $headers, a
# number, or undef.
sub content_length {
    my ($headers) = @_;
    for (my $i = 0; $i < @$headers; $i += 2) {
        return $headers->[ $i + 1 ] + 0 if lc $headers->[$i] eq 'content-length' && $headers->[ $i + 1 ] =~ /\A[0-9]+\z/;
    }
    return undef;
}

# write_last: send $data, the end of a response, as write_all does; on a
# connection that may go to the master (offloadable), a client that takes
# no byte for Actd::Offload::PATIENCE gets the rest from the master: it
# goes in a memory file with the connection (W), and the connection is
# the master's (not alive here). Returns whether all was sent or handed
# over.
sub write_last {
    my ($self, $c, $data) = @_;
    return $self->write_all($c, $data) if !$self->offloadable($c);
    my $result = Actd::Offload::send_last($c->{conn}, \$data, 0, $self->{read_timeout}, sub {
        my ($at) = @_;
        return 0 if length($data) - $at > $self->{worker}->offloads;
        my $fh = Actd::Offload::memory_file(\$data, $at) // return 0;
        my $ok = $self->{worker}->finish($c->{conn}, $fh, 0, length($data) - $at, $c->{keepalive});
        close $fh;
        return $ok;
    });
    $c->{alive} = 0 if $result != Actd::Offload::SENT;
    return $result != Actd::Offload::FAILED;
}

# write_file_last: send $file (file_body), the body of a response whose
# head went, up to $length bytes (its Content-Length) if given; a client
# that takes no byte for Actd::Offload::PATIENCE gets the rest from the
# master, which is given the file itself (W). Returns as write_last.
sub write_file_last {
    my ($self, $c, $file, $length) = @_;
    $length = $file->{length} if !defined $length || $length > $file->{length};
    $c->{bytes} += $length;
    my $result = Actd::Offload::send_file_last($c->{conn}, $file->{fh}, $file->{offset}, $length, $self->{read_timeout}, sub {
        my ($offset, $left) = @_;
        return $self->{worker}->finish($c->{conn}, $file->{fh}, $offset, $left, $c->{keepalive});
    });
    $c->{alive} = 0 if $result != Actd::Offload::SENT;
    return $result != Actd::Offload::FAILED;
}

# complain: log $text, an error of the application or the handler, to
# stderr: each line at priority err when stderr is the journal
# (Actd::Journal), as it is elsewhere.
sub complain {
    my ($text) = @_;
    Actd::Journal::emit(\*STDERR, Actd::Journal::ERR, $text);
}

# chunk: $data as one chunk of a chunked body ('' for no data).
sub chunk {
    my ($data) = @_;
    return length $data ? sprintf('%x', length $data) . CRLF . $data . CRLF : '';
}

# write_all: send $data. Returns false (and marks the connection dead, so
# later writes do nothing) when the client went away or stalled past the
# read timeout.
sub write_all {
    my ($self, $c, $data) = @_;
    return 0 if !$c->{alive};
    my $offset = 0;
    while ($offset < length $data) {
        my $n = syswrite($c->{conn}, $data, length($data) - $offset, $offset);
        if (!defined $n) {
            next if $! == EINTR;
            $c->{alive} = 0;
            return 0;
        }
        $offset += $n;
    }
    return 1;
}

my ($date_second, $date_text) = (-1, '');

# http_date: the current time as an HTTP date, computed once a second.
sub http_date {
    my $now = time;
    return $date_text if $now == $date_second;
    $date_second = $now;
    my @t = gmtime $now;
    my @day = qw(Sun Mon Tue Wed Thu Fri Sat);
    my @month = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);
    return $date_text = sprintf '%s, %02d %s %04d %02d:%02d:%02d GMT',
        $day[ $t[6] ], $t[3], $month[ $t[4] ], $t[5] + 1900, @t[ 2, 1, 0 ];
}

package Actd::Server::Writer;

# The writer of a streaming response: write sends one chunk (or the bytes
# as they are, for a body whose length the application gave), close ends
# the body.

sub new {
    my ($class, $server, $c, $chunked, $send_body) = @_;
    return bless { server => $server, c => $c, chunked => $chunked, send => $send_body, closed => 0 }, $class;
}

sub write {
    my ($self, $data) = @_;
    return if $self->{closed} || !$self->{send} || !defined $data;
    if ($data =~ /[^\x00-\xff]/) {
        Actd::Journal::emit(\*STDERR, Actd::Journal::WARNING,
            Carp::shortmess("Wide character in response body: encoding it as UTF-8"));
        utf8::encode($data);
    }
    $self->{c}{bytes} += length $data;
    $self->{server}->write_all($self->{c}, $self->{chunked} ? Actd::Server::chunk($data) : $data);
}

sub close {
    my ($self) = @_;
    return if $self->{closed}++;
    $self->{server}->write_all($self->{c}, "0\015\012\015\012") if $self->{chunked};
}

1;

__END__

=head1 NAME

Actd::Server - the HTTP server of an actd child, for Plack::Handler::Actd

=head1 SYNOPSIS

  use Actd::Server;
  Actd::Server->new(keepalive_timeout => 1, read_timeout => 5)->run($app);

=head1 DESCRIPTION

The server that L<Plack::Handler::Actd> runs in each child of an actd pool:
it speaks actd's back-channel protocol (L<Actd::Worker>) and serves a PSGI
application over HTTP/1.1, one connection at a time. C<new> takes the
options of L<Plack::Handler::Actd> (keepalive_timeout, read_timeout,
forwarded_allow_ips, keepalive, disable_keepalive) and dies on a bad one;
C<run> serves until actd drains the child, and dies when not run by actd.
See docs/perl.md in the actd repository.

=cut
