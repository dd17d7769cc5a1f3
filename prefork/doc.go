// Package prefork runs a prefork pool: one master loop and a pool of child
// processes that share the listening sockets and accept one connection at a
// time. It knows nothing of systemd; cmd/actd wires it to activation and
// notify. What a child gets and says (fd layout, environment, messages) is
// package protocol's.
//
// Processes, fds and messages:
//
//	                master (Run: one goroutine, parked in the netpoller)
//	epoll: every kind of poller.go: listeners · back-channels (nested set)
//	       · pidfds · wake eventfd · timerfd · held connections · zygotes · responses
//	  │ socketpair(SOCK_SEQPACKET) per child, master end non-blocking
//	  ▼
//	child in slot k: fd 0 /dev/null, 1-2 the master's stdout/stderr,
//	                 3..3+n-1 the n listeners, 3+n the back-channel,
//	                 then the extra fds: the access-log file (accesslog.go),
//	                 the TLS memfds (tlsfds.go)
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
//	greeted:    I → idle, O, T, close → exiting
//	idle:       O, T, A → ordered, close → exiting
//	ordered:    I → idle, B → busy, O, T, close → exiting
//	busy:       I → idle, B → busy, S → busy, O, R, T, close → exiting
//	exiting:    reap → empty
//
// Filter:
//
//	empty:      spawn → starting
//	starting:   H → greeted, O, close → exiting
//	greeted:    I → idle, O, T, close → exiting
//	idle:       B → busy, S, O, K, T, A → moving, C → ordered, close → exiting
//	ordered:    I → idle, B → busy, S, O, K, T, close → exiting
//	moving:     I → idle, B → movingBusy, S, O, K, T, close → exiting
//	movingBusy: I → moving, O, R, K, T, close → exiting
//	busy:       I → idle, O, R, K, T, close → exiting
//	exiting:    reap → empty
//
// Exclusive:
//
//	empty:      spawn → starting
//	starting:   H → greeted, O, close → exiting
//	greeted:    I → standby, O, T, close → exiting
//	standby:    O, T, A → ordered, close → exiting
//	idle:       B → busy, S, O, T, A → moving, close → exiting
//	ordered:    I → idle, O, T, close → exiting
//	moving:     I → idle, B → movingBusy, S, O, T, close → exiting
//	movingBusy: I → moving, O, R, T, close → exiting
//	busy:       I → idle, O, R, T, close → exiting
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
// carries decisions out once per tick. How a child comes into being and
// goes is the launcher's (launcher.go): execLauncher starts Config.Program
// (normally /proc/self/exe and a hidden subcommand) by fork+exec with a
// pidfd; under Config.Preload the zygotes launcher has a zygote fork it.
// Either way the child is reaped when its pidfd is readable, and signalled
// through it, so a recycled PID is never hit. A child that dies young, or
// that the master kills before it served a connection, counts as a start
// failure: the worker is restarted with exponential backoff. One that sends
// garbage, misses a ping, an order or --busy-timeout is killed and replaced.
//
// Pool keeps the loop, the slot table, the back-channels and reaping; each
// other concern is a field of its own type, with its own methods, in the
// file named beside it below: the accept mode, the launcher, generations,
// scaler, pacing, memory, reports, inbox, childSpec, stdio, restoring.
//
// Files, by concern (TestDocFiles checks that every file is named):
//
//   - The loop: pool.go (Pool, New, Run, a turn, handle: who takes each
//     epoll kind), poller.go (the epoll set, every kind in one block),
//     raw.go (raw system calls), call.go (the inbox: other goroutines'
//     calls), tick.go (the periodic work, in order), quiet.go (pacing:
//     when the next tick is due, a quiet pool's distant ticks),
//     lifecycle.go (stop), snapshot.go (Snapshot, Healthy).
//   - Slots: slot.go, machine.go (the state machine and its tables),
//     idleset.go, channel.go (messages from children), hangup.go (a
//     child that closed its channel: what it sent last is read to the
//     end), reports.go (the back-channels' nested set), tally.go (the
//     children's request counts, T, summed for the pool), reap.go (start,
//     reap, free, retire, kill), deadlines.go (due, and applying it),
//     pings.go, leftovers.go (what a reaped child left in its cgroup).
//   - Starting children: launcher.go (the launcher interface, exec),
//     spawn.go (childSpec: what a generation's children start with;
//     fork+exec, the fd layout and environment), stdio.go (a child's fds
//     0-2), zygote.go and forks.go (preload: zygotes, their fork orders),
//     orphans.go (what the subreaper reaps), backoff.go (crash backoff),
//     cloexec.go (what the master inherited stays out of children).
//   - Generations: generation.go (generations: their numbers; start,
//     ready, reload, hand-over), abandon.go (a reload the new worker
//     cannot serve).
//   - Scaling: scaler.go (decide, pure; scaler, its state between
//     periods), scale.go (carrying decide out),
//     queues.go (accept-queue depths, demand, the stuck check),
//     sockdiag.go, listener.go.
//   - Accept modes, behind acceptMode: mode.go, dispatch.go, handoff.go,
//     exclusive.go, shared.go; watch.go (whether epoll reports the
//     listeners, for every mode), register.go (the slot order of children
//     that accept by themselves), screen.go (children that screen under a
//     filter).
//   - Held connections (accept filters): filter.go, hold.go, shed.go,
//     bodies.go (request bodies held until they are in), budget.go (the
//     fds they may take), store.go (restoring: kept outside the master, taken back), offload.go
//     and finish.go (responses children hand the master to finish).
//   - Memory, one type: memory.go, trend.go (growth per connection),
//     usage.go (/proc readings), oom.go (OOM kills), cgroup.go
//     (per-child groups).
//   - The operator's settings: accesslog.go (the access-log file per
//     generation, the children's environment for it and the body limit),
//     bodylimit.go (413 for a held request over --max-request-body),
//     extrafds.go (the fds after the back-channel: access log, TLS).
//   - PROXY protocol: proxy.go (the networks), proxyhold.go (the header
//     of a held connection and the client's address it keeps).
//   - TLS: tlscert.go (which listener terminates TLS with which
//     certificate), tlsfds.go (the certificates' memfds, the fds after the
//     back-channel, the tls capability at hello).
//   - config.go (Config and its checks).
package prefork
