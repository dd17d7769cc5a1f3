package Actd::TLS;

# Actd::TLS: TLS on the listeners actd names in ACTD_TLS (actd's
# --tls-cert and --tls-key, issue 24; capability "tls", revision 6), for
# Plack::Handler::Actd, with IO::Socket::SSL. ACTD_TLS is "INDEX=FD ...":
# listener INDEX's certificate chain and key, PEM, in one file (a sealed
# memfd) at fd FD, loaded through /proc/self/fd/FD once per child. Each
# connection on such a listener is a TLS 1.2+ server session: the
# library's default ciphers, ALPN http/1.1, a handshake within
# HANDSHAKE_TIMEOUT. IO::Socket::SSL is loaded only when ACTD_TLS is set.

use strict;
use warnings;

our $VERSION = '0.1.0';

use constant HANDSHAKE_TIMEOUT => 10;    # seconds for a client's handshake

# listeners: ACTD_TLS as a hash of listener index to fd; empty when it is
# absent. Dies naming the variable for an entry that is not INDEX=FD.
sub listeners {
    my %fds;
    for my $entry (split ' ', $ENV{ACTD_TLS} // '') {
        my ($index, $fd) = $entry =~ /\A([0-9]+)=([0-9]+)\z/
            or die "actd: ACTD_TLS: \"$entry\": want INDEX=FD\n";
        $fds{ $index + 0 } = $fd + 0;
    }
    return \%fds;
}

# contexts: a server context (IO::Socket::SSL::SSL_Context) per listener
# of $fds (listeners), loaded from /proc/self/fd/FD. Dies naming the
# variable when IO::Socket::SSL is missing or a certificate or key does
# not load or match.
sub contexts {
    my ($fds) = @_;
    return {} if !%$fds;
    eval { require IO::Socket::SSL; 1 }
        or die "actd: ACTD_TLS: IO::Socket::SSL is needed (Debian package libio-socket-ssl-perl): $@";
    my %contexts;
    for my $index (sort { $a <=> $b } keys %$fds) {
        my $path = "/proc/self/fd/$fds->{$index}";
        $contexts{$index} = IO::Socket::SSL::SSL_Context->new(server_options($path))
            or die "actd: ACTD_TLS: listener $index, $path: " . IO::Socket::SSL::errstr() . "\n";
    }
    return \%contexts;
}

# server_options: IO::Socket::SSL's options of a server with the
# certificate chain and key in the PEM file $path.
sub server_options {
    my ($path) = @_;
    return (
        SSL_server         => 1,
        SSL_cert_file      => $path,
        SSL_key_file       => $path,
        SSL_version        => 'SSLv23:!SSLv2:!SSLv3:!TLSv1:!TLSv1_1',    # TLS 1.2 and later
        SSL_alpn_protocols => ['http/1.1'],
    );
}

# start: a server TLS session on connected socket $conn with $context,
# the handshake done within $timeout seconds (HANDSHAKE_TIMEOUT). Returns
# $conn made an IO::Socket::SSL (read and write it with sysread and
# syswrite as before), or undef (with IO::Socket::SSL::errstr) when the
# handshake failed or took too long: the caller closes the socket.
sub start {
    my ($conn, $context, $timeout) = @_;
    return IO::Socket::SSL->start_SSL($conn, SSL_server => 1, SSL_reuse_ctx => $context,
        Timeout => $timeout // HANDSHAKE_TIMEOUT);
}

1;

__END__

=head1 NAME

Actd::TLS - TLS on the listeners actd names in ACTD_TLS

=head1 DESCRIPTION

Used by L<Plack::Handler::Actd> and L<Actd::Worker>: see docs/perl.md,
"TLS", in the actd repository.

=cut
