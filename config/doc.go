// Package config turns actd's command line and its config file into one
// validated Config. Every flag can also be a line of the file named by
// --config:
//
//	# comment
//	max-children = 64
//	listen = 127.0.0.1:8080      (may repeat, as may proxy-protocol-from, tls-cert, tls-key)
//	worker = /usr/bin/prog --opt "two words"
//
// Keys are the long flag names; worker is the COMMAND that follows "--" on
// the command line. A flag given on the command line wins over the file.
// Every error is an *Error naming the flag or key (and the file line), for
// exit status 78.
package config
