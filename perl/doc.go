// Package perl holds the Perl side of actd: Plack::Handler::Actd, a PSGI
// server for actd's children (`actd --listen ADDR -- plackup -s Actd
// app.psgi`), and Actd::Worker, the back-channel protocol in core Perl
// (docs/protocol.md), under lib/. docs/perl.md is the user's page.
//
// There is no Go code here but the tests, which run the handler under a
// real actd in dispatch and exclusive mode: Plack's own server test suite
// (t/suite.t, Plack::Test::Suite) and HTTP conversations over raw
// connections (keep-alive, pipelining, chunked bodies, HEAD, malformed
// requests, the request text in `actd status`), --preload
// (preload_test.go, Actd::Zygote), and accept filters (handoff_test.go;
// screen_test.go: the children-first path, Actd::Screen). They skip when perl or
// Plack (Debian package libplack-perl) is missing.
package perl
