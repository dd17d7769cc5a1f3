// Package perl holds the Perl side of actd, a CPAN distribution
// (Plack-Handler-Actd: Makefile.PL, cpanfile, MANIFEST): under lib/,
// Actd::Server, a PSGI server for actd's children, Plack::Handler::Actd,
// plackup's thin adapter to it (`actd --listen ADDR -- plackup -s Actd
// app.psgi`), and Actd::Worker, the back-channel protocol in core Perl
// (docs/protocol.md). docs/perl.md is the user's page.
//
// There is no Go code here but the tests, which run the handler under a
// real actd in dispatch and exclusive mode: Plack's own server test suite
// (t/suite.t, Plack::Test::Suite) and HTTP conversations over raw
// connections (keep-alive, pipelining, chunked bodies, HEAD, malformed
// requests, the request text in `actd status`), --preload
// (preload_test.go, Actd::Zygote), and accept filters (handoff_test.go;
// screen_test.go: the children-first path, Actd::Screen); cpan_test.go
// builds and tests the distribution with MakeMaker and prove. They skip
// when perl or Plack (Debian package libplack-perl) is missing.
package perl
