// Package worker is the child side of actd's back-channel protocol, for
// workers written in Go: a program becomes an actd worker with one call,
//
//	err := worker.Serve(ctx, func(c net.Conn) { ... })
//
// Serve reads the layout the master gives every child (listeners at fds
// 3..3+LISTEN_FDS-1, the back-channel at ACTD_CHANNEL_FD, the accept mode in
// ACTD_ACCEPT_MODE), says hello, and serves one connection at a time:
//
//   - dispatch: it waits for the master's accept order, accepts once, and
//     reports busy, then idle; an accept that finds nothing reports idle at once.
//   - exclusive: it waits on its own epoll set with EPOLLEXCLUSIVE and
//     accepts by itself, still reporting busy and idle.
//   - shared: no back-channel; it polls the listeners and accepts.
//
// Its hello announces the handoff capability: under an accept filter the
// master accepts and hands over connections (a C message with the socket);
// the child serves them as if it had accepted them. A KeepFDHandler
// (ServeKeepFD) may give an idle keep-alive connection back to the master
// between two requests (K), so it costs the child nothing while idle. It
// may also hand the master a response its client reads slowly (W, with
// the rest in a memfd or the file served: Finish, WriteOrFinish,
// SendFileOrFinish; protocol revision 5, capability offload), and writes
// one the master gives back (U) itself.
//
// Under --tls-cert (ACTD_TLS, protocol revision 6, capability tls) Serve,
// ServeEnv, Listener and ServeKeepFDTLS terminate TLS on the listeners the
// master names, with the certificate it passes (tls.go): the handler, or
// Accept, gets a *tls.Conn after its handshake. ServeFD and ServeKeepFD
// do not, and the master refuses them there.
//
// It answers pings, and returns nil after a drain order or when the master
// is gone (EOF on the back-channel), always after finishing the connection
// in hand. The handler's connection is closed when the handler returns.
//
// A server that takes a net.Listener (net/http, and the frameworks built on
// it) runs unchanged on Listener instead:
//
//	l, err := worker.Listener()
//	...
//	err = http.Serve(l, worker.Requests(mux))
//
// The goroutine that serves passes through Go's scheduler every 5 ms at
// most (before a connection, and after a conn's wait): Go's monitor thread
// otherwise takes its P in each blocking system call (docs/go.md). A
// ServeFD handler that serves a long connection in its own loop calls
// Yield between requests for the same.
//
// Report, and the net/http middleware Requests, tell the master what the
// connection in hand is serving, for `actd status`; Tally, which Requests
// calls for each request, counts what it answered for the master's metrics
// (sent at most once a second). docs/protocol.md is the
// reference for the protocol, docs/go.md for running Go servers.
package worker
