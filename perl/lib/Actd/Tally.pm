package Actd::Tally;

# Actd::Tally: what the child answered, for the master's metrics (T,
# protocol revision 6; docs/protocol.md, "Request tallies"). The master
# never sees a response: the child counts each one by status and duration
# and sends the counts since its previous T, at most once a second, never
# blocking (MSG_DONTWAIT: dropped when the channel is full). Actd::Worker
# sends what is due when it would wait for the master (due_ms is how long
# it may wait), and what is left when it ends (flush).

use strict;
use warnings;
use Socket qw(MSG_DONTWAIT);
use Time::HiRes ();
use Actd::Protocol qw(WIRE HEADER TALLY);

# The trailer's layout, as package protocol has it (protocol/tally.go).
my @CODES  = (200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 413, 429, 431, 500, 502, 503, 504);
my @BOUNDS = (5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000);    # µs, inclusive
my %INDEX  = map { $CODES[$_] => $_ } 0 .. $#CODES;

use constant {
    NUM_CODES   => 19 + 6,    # the codes, a class each for 1xx..5xx, other
    NUM_BUCKETS => 11 + 1,    # the last: +Inf
    EVERY       => 1,         # seconds between two T at least
    U32         => 0xFFFFFFFF,
};
use constant TRAILER => '(N' . (NUM_CODES + NUM_BUCKETS) . ')Q>';    # u32 counts, the u64 sum of µs
use constant TALLY_SIZE => 4 * (NUM_CODES + NUM_BUCKETS) + 8;

# new: the recorder for $channel (a handle), or undef under a master
# before revision 6, which would take T for garbage.
sub new {
    my ($class, $channel, $protocol) = @_;
    return undef if $protocol < 6;
    my $self = bless { channel => $channel, sent => 0 }, $class;
    $self->clear;
    return $self;
}

sub clear {
    my ($self) = @_;
    @$self{qw(codes buckets micros pending)} = ([ (0) x NUM_CODES ], [ (0) x NUM_BUCKETS ], 0, 0);
}

# code_index: the index of $status in the counts.
sub code_index {
    my ($status) = @_;
    return NUM_CODES - 1 if !defined $status || $status !~ /\A[0-9]+\z/;
    return $INDEX{$status} if exists $INDEX{$status};
    return @CODES + int($status / 100) - 1 if $status >= 100 && $status < 600;
    return NUM_CODES - 1;
}

# bucket_index: the duration bucket of $micros.
sub bucket_index {
    my ($micros) = @_;
    for my $i (0 .. $#BOUNDS) {
        return $i if $micros <= $BOUNDS[$i];
    }
    return scalar @BOUNDS;
}

# add: count one answer, $status after $micros; sends at once if a second
# has passed since the last T (a child busy for long sends as it goes).
sub add {
    my ($self, $status, $micros) = @_;
    $micros = 0 if $micros < 0;
    $self->{codes}[ code_index($status) ]++;
    $self->{buckets}[ bucket_index($micros) ]++;
    $self->{micros} += $micros;
    $self->{pending} = 1;
    $self->flush if $self->due_ms == 0;
}

# due_ms: milliseconds until the counts are due, 0 if now, -1 with none.
sub due_ms {
    my ($self) = @_;
    return -1 if !$self->{pending};
    my $left = $self->{sent} + EVERY - Time::HiRes::time();
    return $left <= 0 ? 0 : int($left * 1000) + 1;
}

# send_due: send the counts if they are due.
sub send_due {
    my ($self) = @_;
    $self->flush if $self->due_ms == 0;
}

# flush: send the counts, if any, and start again from zero.
sub flush {
    my ($self) = @_;
    return if !$self->{pending};
    my $packet = pack(HEADER, TALLY, WIRE, 0, 0)
        . pack(TRAILER, (map { $_ > U32 ? U32 : $_ } @{ $self->{codes} }, @{ $self->{buckets} }), $self->{micros});
    $self->clear;
    $self->{sent} = Time::HiRes::time();
    CORE::send($self->{channel}, $packet, MSG_DONTWAIT);
}

1;
