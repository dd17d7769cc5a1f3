package prefork

import (
	"errors"
	"fmt"
	"time"

	"github.com/actd/actd/protocol"

	"golang.org/x/sys/unix"
)

// Preload (Config.Preload, --preload). The master starts one zygote per
// generation: the worker program exec'd as any child, with EnvRole set to
// protocol.RoleZygote, which loads the application once and says hello
// with protocol.CapFork. A child is then started by a Fork order instead
// of an exec: the master makes the child's back-channel, keeps its end (the
// slot is starting, with no PID yet) and sends the other to the zygote
// (SCM_RIGHTS, Listener = the slot). The zygote forks twice, the middle
// process exiting at once, so that the child is reparented to the master,
// a child subreaper (PR_SET_CHILD_SUBREAPER): the master waits for it and
// reads its exit status as for an exec'd child. The child says hello with
// its own PID; the master opens its pidfd then (hello, forks.go), and from there on
// the slot is ordinary. StartTimeout covers a fork that never says hello.
//
// Slots started while the zygote is starting wait for its hello (their
// Fork is queued, within StartTimeout); while there is no zygote (it died
// and waits out its backoff) children are exec'd as without preload, so
// the pool never waits for a broken zygote. A zygote that dies is
// restarted with its own backoff; the children it forked are untouched. A
// reload starts a new zygote for the new generation and drains the old.

// zygoteGone is the reason of a slot released because the zygote that was
// to fork it went: not the worker's start failure.
const zygoteGone = "zygote gone"

// zygoteState is where a zygote is.
type zygoteState uint8

const (
	zygoteStarting zygoteState = iota // spawned, no hello yet
	zygoteReady                       // said hello with CapFork: takes Fork orders
	zygoteEnding                      // told to exit (reload, stop, no hello in time) or killed
)

var zygoteStateNames = []string{"starting", "ready", "ending"}

func (z zygoteState) String() string { return zygoteStateNames[z] }

// zygote is one zygote process.
type zygote struct {
	id       int // its key in zygotes.all and its epoll index
	gen      int
	pid      int
	pidfd    int
	ch       int // master end of its back-channel, -1 once closed
	state    zygoteState
	started  time.Time
	deadline time.Time // ending: SIGKILL if still alive then
	forks    uint64
	killed   bool // SIGKILL sent
}

// zygotes is the launcher under Preload: the pool's zygotes, the fork
// orders that wait for one (forks.go), and the orphans it reaps as a child
// subreaper (orphans.go). Without a zygote, or once a reload turned
// Preload off, it exec's (exec).
type zygotes struct {
	p         *Pool
	exec      execLauncher
	current   *zygote         // the current generation's, or nil
	all       map[int]*zygote // not yet reaped, by id
	nextID    int
	pending   []pendingFork
	unborn    map[int]bool // slots forked, no hello yet: no PID known, nothing to reap (forks.go)
	backoff   backoff
	subreaper bool // PR_SET_CHILD_SUBREAPER is set
	forks     uint64
	restarts  uint64
}

// errNoFork is why a generation whose zygote cannot fork is abandoned
// (abandon.go; the first generation's stops the pool).
func errNoFork(z *zygote, caps protocol.Caps) error {
	return &FieldError{Field: "preload", Value: true,
		Allowed: fmt.Sprintf("false for this worker: its zygote (pid %d) says hello without the fork capability "+
			"(it announces %v; docs/protocol.md, ACTD_ROLE); drop --preload, or run a worker that can fork "+
			"(python3 -m actd.wsgi, plackup -s Actd)", z.pid, caps)}
}

// start starts a zygote for the current generation. A failed spawn counts
// as a zygote failure; it is tried again after the backoff.
func (zs *zygotes) start() {
	p := zs.p
	if err := zs.becomeSubreaper(); err != nil {
		p.fail(err)
		return
	}
	c, err := p.spawn(-1, protocol.EnvRole+"="+protocol.RoleZygote)
	if err != nil {
		zs.backoff.fail(p.now, err.Error())
		p.log.Error("zygote spawn failed", "event", "spawn", "err", err, "retry_in", zs.backoff.delay())
		return
	}
	zs.backoff.spawned(p.now)
	zs.nextID++
	z := &zygote{id: zs.nextID, gen: p.gens.cur, pid: c.pid, pidfd: c.pidfd, ch: c.ch, started: p.now}
	if zs.all == nil {
		zs.all = make(map[int]*zygote)
	}
	zs.all[z.id], zs.current = z, z
	if err := p.poll.add(z.pidfd, eventIn, kindLauncherExit, z.id); err != nil {
		p.log.Error("watch zygote", "err", err)
	}
	if err := p.poll.add(z.ch, eventIn, kindLauncher, z.id); err != nil {
		p.log.Error("watch zygote back-channel", "err", err)
	}
	p.log.Info("zygote spawned", "event", "spawn", "pid", z.pid, "generation", z.gen)
	p.changedState()
}

// becomeSubreaper makes the master the parent of orphaned descendants, so
// that children forked by a zygote are its own. It returns prctl's error.
func (zs *zygotes) becomeSubreaper() error {
	if zs.subreaper {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("preload: prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	zs.subreaper = true
	return nil
}

// event takes zygote id's back-channel (kindLauncher) or exit
// (kindLauncherExit).
func (zs *zygotes) event(k kind, id int) {
	if k == kindLauncherExit {
		zs.reap(id)
	} else {
		zs.message(id)
	}
}

// message reads one message from zygote id: its hello, or EOF.
func (zs *zygotes) message(id int) {
	p := zs.p
	z := zs.all[id]
	if z == nil || z.ch < 0 {
		return
	}
	buf := p.readBuf[:]
	n, err := rawRead(z.ch, buf)
	switch {
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		return
	case err != nil || n == 0:
		zs.close(z)
		return
	}
	m, err := protocol.Decode(buf[:n])
	switch {
	case err != nil:
	case m.Type == protocol.Pong:
		return
	case m.Type != protocol.Hello || z.state != zygoteStarting:
		err = fmt.Errorf("%w: %v from a zygote %v", protocol.ErrGarbage, m.Type, z.state)
	case !protocol.Caps(m.Listener).Has(protocol.CapFork):
		p.abandon(errNoFork(z, protocol.Caps(m.Listener))) // z is the current generation's: it starts
		return
	default:
		z.state = zygoteReady
		p.log.Info("zygote ready", "event", "preload", "pid", z.pid, "generation", z.gen,
			"took", p.now.Sub(z.started).Round(time.Millisecond).String())
		zs.sendForks(z)
		p.changedState()
		return
	}
	zs.backoff.fail(p.now, err.Error())
	zs.kill(z, "garbage", err.Error())
}

// close stops reading zygote z: it is going.
func (zs *zygotes) close(z *zygote) {
	if z.ch < 0 {
		return
	}
	zs.p.poll.remove(z.ch)
	unix.Close(z.ch)
	z.ch = -1
	if z.state != zygoteEnding {
		z.state, z.deadline = zygoteEnding, zs.p.now.Add(zs.p.cfg.PingTimeout)
	}
}

// retire tells zygote z to exit (a drain order); its children are not
// touched.
func (zs *zygotes) retire(z *zygote) {
	if z.state == zygoteEnding {
		return
	}
	if z.ch >= 0 {
		var buf [protocol.MessageSize]byte
		_, _ = rawWrite(z.ch, protocol.Message{Type: protocol.Drain}.Encode(buf[:]))
	}
	z.state, z.deadline = zygoteEnding, zs.p.now.Add(zs.p.cfg.PingTimeout)
	zs.forget(z)
}

// kill ends zygote z with SIGKILL. event names the log event, as for a
// child's kill: hung or garbage (a warning), or stop (not logged: the pool
// stops, and says why itself).
func (zs *zygotes) kill(z *zygote, event, why string) {
	if z.killed {
		return
	}
	z.killed = true
	p := zs.p
	if event != "stop" {
		p.log.Warn("killing zygote", "event", event, "pid", z.pid, "reason", why)
	}
	if err := unix.PidfdSendSignal(z.pidfd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		p.log.Error("signal zygote", "pid", z.pid, "err", err)
	}
	zs.close(z)
	zs.forget(z)
}

// reap collects zygote id's exit. One that dies before its hello, or
// young, counts as a zygote start failure, and as a start failure of the
// worker.
func (zs *zygotes) reap(id int) {
	p := zs.p
	z := zs.all[id]
	if z == nil {
		return
	}
	var ws unix.WaitStatus
	pid, err := unix.Wait4(z.pid, &ws, unix.WNOHANG, nil)
	if pid == 0 || errors.Is(err, unix.EINTR) {
		return
	}
	asked := z.state == zygoteEnding && zs.current != z
	zs.close(z)
	zs.forget(z)
	p.poll.remove(z.pidfd)
	unix.Close(z.pidfd)
	delete(zs.all, id)
	p.pace.wake(p.now, p.cfg.tickPeriod()) // a quiet pool's next tick may be far: the new zygote starts from it
	exit := exitText(ws, err)
	if asked || p.stop != nil {
		p.log.Debug("zygote exited", "event", "exit", "pid", z.pid, "exit", exit)
		p.changedState()
		return
	}
	zs.restarts++
	if z.state == zygoteStarting || p.now.Sub(z.started) < youngAge {
		zs.backoff.fail(p.now, exit)
		if z.gen == p.gens.cur {
			// The worker does not start: its children, forked or exec'd,
			// are started one at a time after a delay, as for any failure.
			p.backoff.fail(p.now, "zygote: "+exit)
		}
	} else {
		zs.backoff.ok()
	}
	p.log.Error("zygote died, children are exec'd until a new one is ready", "event", "crash", "pid", z.pid,
		"exit", exit, "generation", z.gen, "retry_in", zs.backoff.delay())
	p.changedState()
}

// tick starts a zygote where the generation lacks one and the backoff
// allows, ends zygotes that outlive their deadline, and reaps orphans.
func (zs *zygotes) tick() {
	p := zs.p
	for _, z := range zs.all {
		switch {
		case z.state == zygoteStarting && p.now.Sub(z.started) > p.cfg.StartTimeout:
			zs.backoff.fail(p.now, "no hello")
			zs.kill(z, "hung", fmt.Sprintf("no hello within %v", p.cfg.StartTimeout))
		case z.state == zygoteEnding && !z.deadline.IsZero() && p.now.After(z.deadline):
			z.deadline = time.Time{}
			zs.kill(z, "hung", "did not exit when told")
		}
	}
	if p.cfg.Preload && zs.current == nil && p.stop == nil && zs.backoff.allows(p.now, 1) > 0 {
		zs.start()
	}
	if zs.subreaper {
		zs.reapOrphans()
	}
}

// stop drains every zygote (on stop), or kills them (kill), and releases
// the slots whose Fork waits.
func (zs *zygotes) stop(kill bool, why string) {
	for _, z := range zs.all {
		if kill {
			zs.kill(z, "stop", why)
		} else {
			zs.retire(z)
		}
	}
	for _, f := range append([]pendingFork(nil), zs.pending...) {
		s := zs.p.slots[f.num]
		s.reason = "stop"
		zs.p.closeChannel(s) // releases it
		zs.dropPending(f.num)
	}
}

// renew gives a new generation its zygote: the old one is drained (its
// children stay, with their generation), a new one started.
func (zs *zygotes) renew() {
	if z := zs.current; z != nil {
		zs.retire(z)
	}
	zs.backoff = backoff{}
	if zs.p.cfg.Preload {
		zs.start()
	}
}

// abandon drains generation gen's zygote: killed if it does not exit
// within PingTimeout (tick). The generation served on has none now: tick
// starts one, without waiting out a backoff.
func (zs *zygotes) abandon(gen int) {
	if z := zs.current; z != nil && z.gen == gen {
		zs.retire(z)
	}
	zs.backoff = backoff{}
}

// settled reports whether the zygotes need no tick: none is starting or
// ending, and under preload the current one is ready.
func (zs *zygotes) settled() bool {
	for _, z := range zs.all {
		if z.state != zygoteReady {
			return false
		}
	}
	return !zs.p.cfg.Preload || zs.current != nil
}

// running reports whether a zygote is not reaped yet.
func (zs *zygotes) running() bool { return len(zs.all) > 0 }

// zygoteInfo is the current generation's zygote, Snapshot.Zygote. Clients
// read its fields; none names the type, so it is not exported
// (TestExportBudget).
type zygoteInfo struct {
	PID        int       `json:"pid"`
	Generation int       `json:"generation"`
	State      string    `json:"state"` // starting, ready, ending, or none (between two)
	Since      time.Time `json:"since"` // started
	Forks      uint64    `json:"forks"` // children it forked
	Forked     uint64    `json:"forked_total"`
	Restarts   uint64    `json:"restarts"`     // zygotes that died unasked
	Memory     uint64    `json:"memory_bytes"` // resident (RSS), read when the snapshot is taken
	CPU        float64   `json:"cpu_seconds"`  // user + system
}

// info returns the zygote line of a snapshot, or nil without preload.
func (zs *zygotes) info() *zygoteInfo {
	p := zs.p
	if !p.cfg.Preload && zs.current == nil {
		return nil
	}
	in := &zygoteInfo{State: "none", Generation: p.gens.cur, Forked: zs.forks, Restarts: zs.restarts}
	if z := zs.current; z != nil {
		in.PID, in.Generation, in.State, in.Since, in.Forks = z.pid, z.gen, z.state.String(), z.started, z.forks
		if u, err := readUsage(z.pid); err == nil { // 20 µs, once a snapshot
			in.Memory, in.CPU = u.memory, u.cpu.Seconds()
		}
	}
	return in
}
