package prefork

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"time"

	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// Pool is a prefork pool: one master loop and its children. Create it with
// New, run it with Run; Snapshot and Reload may be called from any goroutine
// while Run runs.
type Pool struct {
	// The loop.
	cfg     Config
	log     *slog.Logger
	poll    *poller
	now     time.Time
	pace    pacing    // when the next tick is due (quiet.go)
	stop    *stopping // nil until Run's context is done (lifecycle.go)
	stats   Stats
	inbox   *inbox // calls from other goroutines (call.go)
	changed chan struct{}
	done    chan struct{} // closed when Run returns
	ran     bool
	fatal   error // set by fail: Run returns it

	// The slot table and the back-channels.
	listeners []*listener
	slots     []*slot // index = slot number; grows, never shrinks
	idle      idleSet
	table     *table                       // mode.table() (machine.go)
	readBuf   [protocol.MaxPacket + 1]byte // readChannel's
	reports   reports                      // the back-channels' nested epoll set (reports.go)
	tallies   tallies                      // the children's request counts (tally.go)

	// Collaborators, each a type with its own methods in the file named.
	mode     acceptMode  // how children take connections, decided once in New (mode.go)
	launcher launcher    // how children start and go (launcher.go)
	gens     generations // the current generation and those around it (generation.go)
	spec     childSpec   // what the current generation's children start with (spawn.go)
	stdio    stdio       // a child's fds 0-2 (stdio.go)
	backoff  backoff     // crash backoff (backoff.go)
	scaler   scaler      // the scaler's state between periods (scaler.go)
	mem      memory      // control groups and OOM counter (memory.go)
	restore  restoring   // the store and what Run's start takes back from it (store.go)
	proxy    proxyCache  // the current generation's PROXY networks (proxy.go)
}

// New checks cfg and the listeners and returns a pool ready to Run. The pool
// owns the listener fds from then on. New marks every fd of the process from 3
// up close-on-exec, so children inherit only what protocol/fds.go lists. It returns a
// *FieldError for a bad setting, or an error naming the listener that is no
// stream socket.
func New(cfg Config, listeners []Listener, log *slog.Logger) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := closeInheritedOnExec(); err != nil {
		return nil, err
	}
	if len(listeners) == 0 {
		return nil, errors.New("no listening sockets")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pool{cfg: cfg, log: log, scaler: scaler{ramp: 1},
		changed: make(chan struct{}, 1), done: make(chan struct{}), stdio: closedStdio}
	p.inbox = newInbox(p.done)
	mode, err := newMode(p, cfg.Mode)
	if err != nil {
		return nil, err
	}
	p.mode, p.table = mode, mode.table()
	for i, l := range listeners {
		ln, err := newListener(l, i, cfg.Mode.SpeaksProtocol())
		if err != nil {
			return nil, err
		}
		p.listeners = append(p.listeners, ln)
	}
	if _, err := proxyNetworks(cfg, p.listeners); err != nil {
		return nil, err
	}
	tls, err := newTLSFiles(cfg.TLS, p.listeners)
	if err != nil {
		return nil, err
	}
	logFile, err := openAccessLog(cfg) // accesslog.go
	if err != nil {
		tls.close()
		return nil, err
	}
	p.spec = newChildSpec(cfg, p.listeners, logFile, tls)
	p.mem = newMemory(&p.cfg, log)
	p.launcher = newLauncher(p, nil)
	return p, nil
}

// Changes returns a channel that receives a value (without blocking the pool,
// so several changes may merge into one) whenever the pool's state changes.
func (p *Pool) Changes() <-chan struct{} { return p.changed }

func (p *Pool) changedState() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// Run starts the start children and runs the master loop until ctx is done,
// then drains: no new orders, every child finishes its connection and exits
// (SIGKILL after GracefulTimeout), and Run returns nil. It returns an error
// only if the loop itself fails (epoll, eventfd). Run may be called once.
func (p *Pool) Run(ctx context.Context) error {
	if p.ran {
		return errors.New("pool: Run called twice")
	}
	p.ran = true
	defer close(p.done)
	if p.pinned() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	if err := p.setup(); err != nil {
		p.teardown()
		return err
	}
	defer p.teardown()
	p.inbox.wakeUp() // for calls queued before the eventfd existed
	stopWake := context.AfterFunc(ctx, p.inbox.wakeUp)
	defer stopWake()
	p.now = time.Now()
	p.adoptStored()
	p.startGeneration()
	for {
		if err := p.turn(ctx); err != nil {
			p.killAll("master loop failed")
			return err
		}
		if p.stop != nil && p.liveCount() == 0 && !p.launcher.running() && p.mode.holdCounts().sends == 0 {
			return nil
		}
	}
}

// pinned reports whether the loop runs on one locked OS thread: when the
// children have no back-channel (shared mode), they are spawned with
// Pdeathsig, which follows the thread that forked them. Such a loop blocks in epoll_wait; any other parks in the
// Go netpoller, where a locked thread would make every wakeup a handoff
// between threads.
func (p *Pool) pinned() bool { return !p.cfg.Mode.SpeaksProtocol() }

// setup opens the loop's fds: epoll, the wake eventfd, /dev/null.
func (p *Pool) setup() error {
	var err error
	if p.poll, err = newPoller(); err != nil {
		return err
	}
	if !p.pinned() {
		if err := p.poll.park(); err != nil {
			return err
		}
	}
	wake, err := p.inbox.openWake()
	if err != nil {
		return err
	}
	if err := p.poll.add(wake, eventIn, kindWake, 0); err != nil {
		return err
	}
	if err := p.reports.open(p.poll, p.log); err != nil {
		return err
	}
	if err := p.stdio.open(); err != nil {
		return err
	}
	return p.mode.setup()
}

func (p *Pool) teardown() {
	p.inbox.closeWake()
	p.stdio.close()
	if p.poll != nil {
		p.poll.close()
	}
	if p.reports.poll != nil {
		p.reports.poll.close()
	}
	for _, l := range p.listeners {
		unix.Close(l.FD)
	}
	p.spec.tls.close() // tlsfds.go
	p.gens.close()
}

// turn is one pass of the master loop: wait for events or the next tick,
// handle what is ready, then do the periodic work that is due.
func (p *Pool) turn(ctx context.Context) error {
	events, err := p.poll.wait(p.pace.next)
	if err != nil {
		return err
	}
	p.now = time.Now()
	p.stats.LoopAt = p.now
	p.stats.Turns++
	for _, ev := range events {
		p.handle(ev)
	}
	if ctx.Err() != nil && p.stop == nil {
		p.beginStop()
	}
	if !p.now.Before(p.pace.next) {
		p.tick()
	}
	p.gens.ready.check(p)
	p.drainChildren()
	p.armReports()
	return p.fatal
}

func (p *Pool) handle(ev unix.EpollEvent) {
	index := int(ev.Pad)
	switch kind(ev.Fd) {
	case kindWake:
		p.inbox.run()
	case kindListener:
		p.mode.readable(p.listeners[index])
	case kindReports:
		p.harvest()
	case kindPidfd:
		p.reap(p.slots[index])
	case kindTimer:
		p.poll.expired()
	case kindHeld:
		p.mode.heldEvent(index, ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0)
	case kindOffload:
		p.mode.sendEvent(index)
	case kindLauncher, kindLauncherExit:
		p.launcher.event(kind(ev.Fd), index)
	}
}

// fail stops the pool: Run kills the children and returns err, after the
// current turn of the loop. The first error wins.
func (p *Pool) fail(err error) {
	if p.fatal == nil {
		p.fatal = err
	}
}
