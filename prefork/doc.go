// Package prefork runs a prefork pool: one master loop and a pool of child
// processes that share the listening sockets and accept one connection at a
// time. It knows nothing of systemd; cmd/actd wires it to activation and
// notify. What a child gets and says (fd layout, environment, messages) is
// package protocol's.
//
// Processes, fds and messages:
//
//	                master (Run: one goroutine, parked in the netpoller)
//	epoll: listeners · back-channels (nested set) · pidfds · wake eventfd
//	  │ socketpair(SOCK_SEQPACKET) per child, master end non-blocking
//	  ▼
//	child in slot k: fd 0 /dev/null, 1-2 the master's stdout/stderr,
//	                 3..3+n-1 the n listeners, 3+n the back-channel,
//	                 then the extra fds: the access-log file (accesslog.go)
//	  H hello(pid, caps) → I idle → (A accept(l) → B busy(l) [R request] → I idle)* ...
//	  ← P ping(seq) / O pong(seq)    ← D drain: finish, exit 0
//	  under an accept filter, instead of A: ← C conn(l)+fd → B busy(l) ... [K keep(l)+fd] → I idle
//
// Slots, not PIDs, order the children: the lowest idle slot is ordered to
// accept (dispatch mode), found in constant time (idleSet); handling a
// message costs the same whatever the pool size.
//
// Accept modes, one type each behind acceptMode (mode.go), chosen once by
// newMode: dispatchMode (dispatch.go: the master watches the listeners and
// orders), handoffMode (handoff.go: dispatch under an accept filter; children
// that screen accept by themselves and give the master what is not ready
// (screen.go); for the others the master accepts; it holds connections in
// its own epoll set until they are ready (hold.go; the rule is package
// acceptfilter), and hands them over), exclusiveMode (exclusive.go: children wait with EPOLLEXCLUSIVE
// and accept by themselves, registered in slot order, still reporting busy
// and idle), sharedMode (shared.go: children do not speak the protocol; a
// fixed-size pool).
//
// A slot's life is one state machine (machine.go): every message, order,
// start, close and reap goes through step and the mode's table; a message
// with no transition is garbage. The tables, as diagram draws them ("ev → to";
// an event alone leaves the state as it is; close: the back-channel closed
// or the master stopped reading it):
//
// Dispatch:
//
//	empty:      spawn → starting
//	starting:   H → greeted, O, close → exiting
//	greeted:    I → idle, O, close → exiting
//	idle:       O, A → ordered, close → exiting
//	ordered:    I → idle, B → busy, O, close → exiting
//	busy:       I → idle, B → busy, S → busy, O, R, close → exiting
//	exiting:    reap → empty
//
// Filter:
//
//	empty:      spawn → starting
//	starting:   H → greeted, O, close → exiting
//	greeted:    I → idle, O, close → exiting
//	idle:       B → busy, S, O, K, A → moving, C → ordered, close → exiting
//	ordered:    I → idle, B → busy, S, O, K, close → exiting
//	moving:     I → idle, B → movingBusy, S, O, K, close → exiting
//	movingBusy: I → moving, O, R, K, close → exiting
//	busy:       I → idle, O, R, K, close → exiting
//	exiting:    reap → empty
//
// Exclusive:
//
//	empty:      spawn → starting
//	starting:   H → greeted, O, close → exiting
//	greeted:    I → standby, O, close → exiting
//	standby:    O, A → ordered, close → exiting
//	idle:       B → busy, S, O, A → moving, close → exiting
//	ordered:    I → idle, O, close → exiting
//	moving:     I → idle, B → movingBusy, S, O, close → exiting
//	movingBusy: I → moving, O, R, close → exiting
//	busy:       I → idle, O, R, close → exiting
//	exiting:    reap → empty
//
// Shared:
//
//	empty:      spawn → running
//	running:    reap → empty
//
// How a child ends is its fate beside that state: living, draining (told to
// finish and exit) or killed (SIGKILL sent).
//
// Policy is pure and mechanism thin: decide (scaler.go) says how the pool
// grows and shrinks from counts alone (Apache prefork's algorithm, reacting
// to the accept queue), due (deadlines.go) what a slot's deadlines ask of a
// tick (a ping, SIGQUIT, SIGKILL) from the slot and the time alone; the loop
// carries decisions out once per tick. Children are started with fork+exec
// of Config.Program (normally /proc/self/exe and a hidden subcommand) and a
// pidfd, reaped when the pidfd is readable, and signalled
// through it, so a recycled PID is never hit. A child that dies young, or
// that the master kills before it served a connection, counts as a start
// failure: the worker is restarted with exponential backoff. One that sends
// garbage, misses a ping, an order or --busy-timeout is killed and replaced.
//
// Files: pool.go (Pool, Run, the loop), machine.go (slot states), mode.go,
// dispatch.go, handoff.go, exclusive.go, shared.go (the accept modes),
// screen.go (children that accept by themselves under a filter),
// register.go (the slot order in which children that accept by themselves
// register their listeners: exclusive mode and screen.go),
// filter.go and hold.go (accept filters: TCP_DEFER_ACCEPT, held
// connections), shed.go (held connections timed out or shed for room),
// offload.go and finish.go (responses children hand the
// master to finish), store.go (held connections kept outside the master),
// channel.go
// (messages from children), tick.go (the periodic work, in order),
// deadlines.go (due, and applying it), pings.go (which idle children a tick
// pings), scale.go (carrying out decide, scaler.go), queues.go (accept-queue
// depths, the scaler's demand, the stuck check), reap.go
// (start, reap, retire, kill), leftovers.go (what a reaped child left in its
// cgroup), generation.go (start, ready, reload and hand-over),
// abandon.go (a reload the new worker cannot serve), lifecycle.go (stop), scaler.go,
// idleset.go, slot.go, spawn.go, listener.go, sockdiag.go, snapshot.go,
// poller.go, raw.go, reports.go; config.go (Config and its checks),
// budget.go (the fds the master may spend on held connections),
// bodies.go (request bodies held until they are in), bodylimit.go (413
// for a held request over --max-request-body), accesslog.go (the
// children's access-log file and environment), backoff.go (crash
// backoff), quiet.go (a quiet pool's distant ticks), call.go (running a
// function on the loop), cloexec.go (what the master inherited stays out
// of children), orphans.go (reaping exited processes no slot owns),
// zygote.go (preload), memory.go, usage.go and oom.go (children's memory:
// limits, readings, OOM kills), cgroup.go (per-child groups). Every file
// is named here (TestDocFiles).
package prefork
