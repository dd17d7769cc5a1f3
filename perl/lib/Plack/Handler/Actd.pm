package Plack::Handler::Actd;

# Plack::Handler::Actd: plackup's name for Actd::Server, the HTTP server
# of one actd child (`plackup -s Actd app.psgi`), as
# Plack::Handler::Starman is Starman::Server's. The options and the
# serving are the server's.

use strict;
use warnings;
use Actd::Server;

our $VERSION = '0.1.0';

# new: the handler, from plackup's options (Actd::Server::new, which dies
# on a bad one).
sub new {
    my ($class, %args) = @_;
    return bless { server => Actd::Server->new(%args) }, $class;
}

# run: serve $app in this actd child until the master drains it or goes
# away (Actd::Server::run). Dies when not run by actd.
sub run {
    my ($self, $app) = @_;
    return $self->{server}->run($app);
}

1;

__END__

=head1 NAME

Plack::Handler::Actd - run a PSGI application in an actd prefork pool

=head1 SYNOPSIS

  actd --listen 127.0.0.1:8080 -- plackup -s Actd -E deployment app.psgi

=head1 DESCRIPTION

actd (a prefork supervisor for systemd) owns the listening sockets and the
pool of processes; each child runs plackup with this handler, whose server,
L<Actd::Server>, speaks actd's back-channel protocol (L<Actd::Worker>) and
serves HTTP/1.1 one connection at a time. See docs/perl.md in the actd repository.

=head1 OPTIONS

=over 4

=item --keepalive-timeout SECONDS

How long to wait for the next request on a keep-alive connection (default
1, as Starman). The child is busy meanwhile. Under actd's C<--accept-filter> a connection
waits 1 ms instead, then goes back to the master, which holds it without a
child until its next request is in.

=item --read-timeout SECONDS

The longest a request's head may take to arrive, and the longest wait for
each read or write (default 5, as Starman).

=item --forwarded-allow-ips CIDR[,CIDR...]

Trust X-Forwarded-For and X-Forwarded-Proto from these addresses (after
a PROXY header), as gunicorn's option of that name; default
C<ACTD_FORWARDED_ALLOW_IPS>, else none.

=item --disable-keepalive

Close every connection after its response.

=back

--host, --port, --listen and --socket are ignored: the sockets are actd's.

=head1 PRELOAD

Under C<actd --preload> (Starman's C<--preload-app>), actd runs this handler
once more per generation with C<ACTD_ROLE=zygote>: plackup loads the
application there, and L<Actd::Zygote> forks every child from it on actd's
order, so the children share the application's pages. Nothing to set on the
plackup side.

=cut
