// Package prefork runs a prefork pool: one master loop and a pool of child
// processes that share the listening sockets and accept one connection at a
// time. It knows nothing of systemd; cmd/actd wires it to activation and
// notify.
//
// Processes, fds and messages:
//
//	                master (Run: one goroutine, parked in the netpoller)
//	epoll: listeners · back-channels · pidfds · wake eventfd (calls)
//	  │ socketpair(SOCK_SEQPACKET) per child, master end non-blocking
//	  ▼
//	child in slot k: fd 0 /dev/null, 1-2 the master's stdout/stderr,
//	                 3..3+n-1 the n listeners, 3+n the back-channel
//	  H hello(pid) → I idle → (A accept(l) → B busy(l) → I idle)* ...
//	  ← P ping(seq) / O pong(seq)    ← D drain: finish, exit 0
//
// Slots, not PIDs, order the children: the lowest idle slot is ordered to
// accept (dispatch mode), found in constant time (idleSet); handling a
// message costs the same whatever the pool size. Messages are 8 bytes
// (package protocol, docs/protocol.md).
//
// Accept modes: Dispatch (the master watches the listeners and orders),
// Exclusive (children wait with EPOLLEXCLUSIVE and accept by themselves, still
// reporting busy and idle), Shared (children do not speak the protocol; a
// fixed-size pool).
//
// Policy is pure and mechanism thin: Scale decides how the pool grows and
// shrinks from counts alone (Apache prefork's algorithm, reacting to the accept
// queue); the loop carries decisions out once per tick. Children are started
// with fork+exec of Config.Program (normally /proc/self/exe and a hidden
// subcommand) and a pidfd, reaped when the pidfd is readable, and signalled
// through it, so a recycled PID is never hit. A child that dies young is
// restarted with exponential backoff; one that sends garbage, misses a ping,
// an order or --busy-timeout is killed and replaced.
//
// Files: pool.go (Pool, Run, the loop), dispatch.go (the per-connection path),
// channel.go (messages from children), tick.go (deadlines, pings, scaling),
// reap.go (start, reap, retire, kill), lifecycle.go (ready, reload, stop),
// scaler.go, idleset.go, slot.go, spawn.go, listener.go, sockdiag.go,
// snapshot.go, message.go, fds.go, poller.go, raw.go, reports.go, arm.go.
package prefork
