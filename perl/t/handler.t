#!/usr/bin/perl
# handler.t: every module of the distribution compiles, and
# Plack::Handler::Actd is plackup's thin adapter to Actd::Server: new
# hands plackup's options to the server (which checks them), run hands it
# the application (and, outside actd, dies as the server does).
use strict;
use warnings;
use File::Find ();
use File::Spec;
use File::Basename qw(dirname);
use Test::More;

my $lib = File::Spec->catdir(dirname(__FILE__), File::Spec->updir, 'lib');
my @modules;
File::Find::find({ no_chdir => 1, wanted => sub {
    return unless /\.pm\z/;
    push @modules, File::Spec->abs2rel($_, $lib) =~ s{\.pm\z}{}r =~ s{/}{::}gr;
} }, $lib);
@modules = sort @modules;
plan tests => @modules + 7;
require_ok($_) for @modules;

my $handler = Plack::Handler::Actd->new(keepalive_timeout => 2, read_timeout => 3, disable_keepalive => 1);
isa_ok $handler->{server}, 'Actd::Server', 'the server';
is_deeply [ @{ $handler->{server} }{qw(keepalive_timeout read_timeout keepalive)} ], [ 2, 3, !1 ],
    'the options are the server\'s';
ok !eval { Plack::Handler::Actd->new(read_timeout => 'soon'); 1 }, 'a bad option dies';
like $@, qr/\APlack::Handler::Actd: --read-timeout soon: want seconds > 0$/, '... naming the option';

local @ENV{qw(ACTD_ACCEPT_MODE ACTD_ROLE)};
my $served;
{
    no warnings qw(redefine once);
    local *Actd::Server::run = sub { $served = $_[1]; 'ran' };
    my $app = sub { [ 200, [], [] ] };
    is $handler->run($app), 'ran', 'run runs the server';
    is $served, $app, '... with the application';
}
ok !eval { $handler->run(sub { [ 200, [], [] ] }); 1 } && $@ =~ /\Aactd worker: ACTD_ACCEPT_MODE=""/,
    'outside actd, run dies as the server does';
