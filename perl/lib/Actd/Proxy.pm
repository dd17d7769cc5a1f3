package Actd::Proxy;

# Actd::Proxy: the PROXY protocol (HAProxy's, v1 text and v2 binary) in
# front of a connection from a trusted balancer (actd's
# --proxy-protocol-from, ACTD_PROXY_FROM; issue 24), and the networks that
# say which peers are trusted: pure functions of bytes and addresses, for
# Actd::Worker, which peeks, judges with parse and then reads exactly the
# header (consume, the one piece with I/O), and Plack::Handler::Actd
# (ACTD_FORWARDED_ALLOW_IPS). The rule is the master's (docs/protocol.md,
# "PROXY protocol").

use strict;
use warnings;
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use Socket qw(AF_INET AF_INET6 inet_pton inet_ntop MSG_PEEK MSG_DONTWAIT);
use Time::HiRes ();

our $VERSION = '0.1.0';

use constant {
    V1_LIMIT     => 107,                          # bytes of a v1 line, CRLF included
    V2_SIGNATURE => "\r\n\r\n\0\r\nQUIT\n",
    V2_LIMIT     => 16 + 1024,                    # bytes of a v2 header accepted
    PEEK_SIZE    => 16 + 1024,                    # what a reader peeks to judge a header
    COMPLETE     => 1,                            # parse: a whole header
    INCOMPLETE   => 0,                            # parse: a good start, more bytes needed
    BAD          => -1,                           # parse: no PROXY header: close without an answer
    MAX_ADDRESS  => 48,                           # bytes of an address trailer (HOST:PORT)
    PEEK_EVERY   => 0.005,                        # seconds between two peeks at a header cut short
};

# parse: judge $bytes, the first bytes a trusted peer sent. Returns
# (COMPLETE, length, address) for a whole header of length bytes, address
# "HOST:PORT" (IPv6 in brackets) or undef where the header keeps the
# socket's peer (v1 UNKNOWN, v2 LOCAL, a family other than TCP over IPv4
# or IPv6); (INCOMPLETE) while more bytes may make one; (BAD) for
# anything else.
sub parse {
    my ($bytes) = @_;
    my $sig = V2_SIGNATURE;
    my $n = length $bytes < length $sig ? length $bytes : length $sig;
    return parse_v2($bytes) if substr($bytes, 0, $n) eq substr($sig, 0, $n) && $n > 0;
    return parse_v1($bytes);
}

# parse_v1: parse for a v1 line: "PROXY TCP4|TCP6 SRC DST SPORT DPORT\r\n"
# or "PROXY UNKNOWN ...\r\n", at most V1_LIMIT bytes.
sub parse_v1 {
    my ($bytes) = @_;
    my $end = index $bytes, "\r\n";
    if ($end < 0) {
        return (BAD) if length $bytes >= V1_LIMIT;
        my $n = length $bytes < 6 ? length $bytes : 6;
        return (BAD) if substr($bytes, 0, $n) ne substr('PROXY ', 0, $n) || $bytes =~ /[^\x20-\x7e\r]|\r(?!\z)/;
        return (INCOMPLETE);
    }
    return (BAD) if $end + 2 > V1_LIMIT;
    my $line = substr $bytes, 0, $end;
    return (COMPLETE, $end + 2, undef) if $line =~ /\APROXY UNKNOWN(?: [\x20-\x7e]*)?\z/;
    my ($family, $src, $dst, $sport, $dport) = $line =~ /\APROXY (TCP4|TCP6) (\S+) (\S+) ([0-9]{1,5}) ([0-9]{1,5})\z/
        or return (BAD);
    my $af = $family eq 'TCP4' ? AF_INET : AF_INET6;
    return (BAD) if !inet_pton($af, $src) || !inet_pton($af, $dst) || !port($sport) || !port($dport);
    return (BAD) if $family eq 'TCP4' && $src !~ /\A[0-9.]+\z/;
    return (COMPLETE, $end + 2, join_address(inet_ntop($af, inet_pton($af, $src)), $sport + 0));
}

# port: whether $text is a port number (0 to 65535, no leading zero).
sub port { $_[0] =~ /\A(?:0|[1-9][0-9]*)\z/ && $_[0] <= 65535 }

# parse_v2: parse for a v2 header: the signature, version 2 with command
# LOCAL (0x20) or PROXY (0x21), a family byte, a u16 length, then that
# many bytes of addresses and TLVs (skipped); at most V2_LIMIT in all.
sub parse_v2 {
    my ($bytes) = @_;
    return (INCOMPLETE) if length $bytes < 16;
    return (BAD) if substr($bytes, 0, 12) ne V2_SIGNATURE;
    my ($command, $family, $length) = unpack 'x12 C C n', $bytes;
    return (BAD) if ($command != 0x20 && $command != 0x21) || 16 + $length > V2_LIMIT;
    return (INCOMPLETE) if length $bytes < 16 + $length;
    my $total = 16 + $length;
    return (COMPLETE, $total, undef) if $command == 0x20;
    if ($family == 0x11) {    # TCP over IPv4: src, dst, sport, dport
        return (BAD) if $length < 12;
        my ($src, $sport) = unpack 'x16 a4 x4 n', $bytes;
        return (COMPLETE, $total, join_address(inet_ntop(AF_INET, $src), $sport));
    }
    if ($family == 0x21) {    # TCP over IPv6
        return (BAD) if $length < 36;
        my ($src, $sport) = unpack 'x16 a16 x16 n', $bytes;
        return (COMPLETE, $total, join_address(inet_ntop(AF_INET6, $src), $sport));
    }
    return (COMPLETE, $total, undef);    # UDP, unix, unspecified: as LOCAL
}

# consume: read the PROXY header at the start of socket $conn, exactly its
# bytes (peeked first: nothing after it is read), waiting up to $timeout
# seconds for it to be whole (0: peek once). Returns (COMPLETE, address)
# as parse; (INCOMPLETE) when $timeout is 0 and the header is not whole
# (nothing read: the connection may go to the master); (BAD) for a bad
# header, end of file, an error, or a header not whole in time. The one
# function here that does I/O.
sub consume {
    my ($conn, $timeout) = @_;
    my $deadline = Time::HiRes::time() + $timeout;
    while (1) {
        my $peek = '';
        my $got = recv($conn, $peek, PEEK_SIZE, MSG_PEEK | MSG_DONTWAIT);
        if (!defined $got) {
            next if $! == EINTR;
            return (BAD) if $! != EAGAIN && $! != EWOULDBLOCK;
        } elsif ($peek eq '') {
            return (BAD);    # end of file
        }
        my ($state, $length, $address) = $peek eq '' ? (INCOMPLETE) : parse($peek);
        return (BAD) if $state == BAD;
        if ($state == COMPLETE) {
            read_exactly($conn, $length) or return (BAD);
            return (COMPLETE, $address);
        }
        return (INCOMPLETE) if !$timeout;
        return (BAD) if Time::HiRes::time() >= $deadline;
        Time::HiRes::sleep(PEEK_EVERY);
    }
}

# read_exactly: read $length bytes from $conn and drop them; false if the
# connection ended first.
sub read_exactly {
    my ($conn, $length) = @_;
    while ($length > 0) {
        my $n = sysread($conn, my $buf, $length);
        if (!defined $n) {
            next if $! == EINTR;
            return 0 if $! != EAGAIN && $! != EWOULDBLOCK;
            Time::HiRes::sleep(PEEK_EVERY);
            next;
        }
        return 0 if !$n;
        $length -= $n;
    }
    return 1;
}

# join_address: "HOST:PORT", an IPv6 host in brackets (Go's
# net.JoinHostPort).
sub join_address {
    my ($host, $port) = @_;
    return index($host, ':') >= 0 ? "[$host]:$port" : "$host:$port";
}

# peer_address: "HOST:PORT" (join_address) of a packed socket address
# $peer (getpeername) of TCP over IPv4 or IPv6; undef for anything else.
sub peer_address {
    my ($peer) = @_;
    return undef if !defined $peer || length $peer < 2;
    my $family = Socket::sockaddr_family($peer);
    my ($port, $ip) = $family == AF_INET ? Socket::unpack_sockaddr_in($peer)
        : $family == AF_INET6 ? Socket::unpack_sockaddr_in6($peer) : return undef;
    return join_address(inet_ntop($family, $ip), $port);
}

# split_address: (host, port) of "HOST:PORT" or "[HOST]:PORT"; an empty
# list for anything else.
sub split_address {
    my ($address) = @_;
    return ($1, $2 + 0) if $address =~ /\A\[([0-9A-Fa-f:.]+)\]:([0-9]{1,5})\z/ || $address =~ /\A([^:\[\]]+):([0-9]{1,5})\z/;
    return ();
}

# network: [packed address, prefix bits] of "IP/BITS" or a bare IP (a /32
# or /128); undef if malformed. An IPv4 network is kept as IPv4.
sub network {
    my ($cidr) = @_;
    my ($ip, $bits) = $cidr =~ m{\A([^/]+)(?:/([0-9]{1,3}))?\z} or return undef;
    my $packed = inet_pton(AF_INET, $ip) // inet_pton(AF_INET6, $ip) // return undef;
    my $max = 8 * length $packed;
    $bits //= $max;
    return undef if $bits > $max;
    return [ $packed, $bits ];
}

# listener_networks: ACTD_PROXY_FROM's value ("INDEX=CIDR ...") as a hash
# of listener index to a list of networks. Dies naming the variable for an
# entry that is not INDEX=CIDR.
sub listener_networks {
    my ($spec) = @_;
    my %by;
    for my $entry (split ' ', $spec // '') {
        my ($index, $cidr) = $entry =~ /\A([0-9]+)=(.+)\z/;
        my $net = defined $cidr ? network($cidr) : undef;
        defined $net or die "actd: ACTD_PROXY_FROM: \"$entry\": want INDEX=CIDR\n";
        push @{ $by{ $index + 0 } }, $net;
    }
    return \%by;
}

# networks: a comma-separated list of CIDRs (ACTD_FORWARDED_ALLOW_IPS) as
# a list of networks; dies naming $name for a malformed entry.
sub networks {
    my ($list, $name) = @_;
    my @nets;
    for my $cidr (grep { length } map { s/\A\s+|\s+\z//gr } split /,/, $list // '') {
        push @nets, network($cidr) // die "actd: $name: \"$cidr\": want a CIDR or an IP\n";
    }
    return \@nets;
}

# contains: whether IP text $ip is in one of @$nets. An IPv4-mapped IPv6
# address (::ffff:a.b.c.d) matches IPv4 networks.
sub contains {
    my ($nets, $ip) = @_;
    return 0 if !defined $ip || !$nets || !@$nets;
    my $packed = inet_pton(AF_INET, $ip) // inet_pton(AF_INET6, $ip) // return 0;
    my @forms = ($packed);
    push @forms, substr($packed, 12) if length $packed == 16 && substr($packed, 0, 12) eq "\0" x 10 . "\xff\xff";
    for my $net (@$nets) {
        for my $form (@forms) {
            next if length $form != length $net->[0];
            return 1 if prefix_equal($form, $net->[0], $net->[1]);
        }
    }
    return 0;
}

# prefix_equal: whether packed addresses $a and $b agree in their first
# $bits bits.
sub prefix_equal {
    my ($a, $b, $bits) = @_;
    my $bytes = int($bits / 8);
    return 0 if substr($a, 0, $bytes) ne substr($b, 0, $bytes);
    my $rest = $bits % 8 or return 1;
    my $mask = (0xff << (8 - $rest)) & 0xff;
    return (ord(substr $a, $bytes, 1) & $mask) == (ord(substr $b, $bytes, 1) & $mask);
}

1;

__END__

=head1 NAME

Actd::Proxy - the PROXY protocol header and trusted networks

=head1 DESCRIPTION

Used by L<Actd::Worker> and L<Plack::Handler::Actd>: see docs/perl.md,
"PROXY protocol", in the actd repository.

=cut
