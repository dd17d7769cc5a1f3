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
// its own PID; the master opens its pidfd then (adopt), and from there on
// the slot is ordinary. StartTimeout covers a fork that never says hello.
//
// Slots started while the zygote is starting wait for its hello (their
// Fork is queued, within StartTimeout); while there is no zygote (it died
// and waits out its backoff) children are exec'd as without preload, so
// the pool never waits for a broken zygote. A zygote that dies is
// restarted with its own backoff; the children it forked are untouched. A
// reload starts a new zygote for the new generation and drains the old.

// kindZygote marks a zygote's back-channel, kindZygoteExit its pidfd, in the
// loop's set; the index is the zygote's id.
const (
	kindZygote     kind = kindHeld + 1
	kindZygoteExit kind = kindHeld + 2
)

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
	id       int // its key in preload.all and its epoll index
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

// pendingFork is a slot waiting for its zygote's hello: the child's end of
// its back-channel, to send with the Fork.
type pendingFork struct {
	num, fd, gen int
}

// preload is the pool's zygotes.
type preload struct {
	current   *zygote         // the current generation's, or nil
	all       map[int]*zygote // not yet reaped, by id
	nextID    int
	pending   []pendingFork
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

// startZygote starts a zygote for the current generation. A failed spawn
// counts as a zygote failure; it is tried again after the backoff.
func (p *Pool) startZygote() {
	pre := &p.pre
	if err := pre.becomeSubreaper(); err != nil {
		p.fail(err)
		return
	}
	c, err := p.spawnAs(-1, protocol.EnvRole+"="+protocol.RoleZygote)
	if err != nil {
		pre.backoff.fail(p.now, err.Error())
		p.log.Error("zygote spawn failed", "event", "spawn", "err", err, "retry_in", pre.backoff.delay())
		return
	}
	pre.backoff.spawned(p.now)
	pre.nextID++
	z := &zygote{id: pre.nextID, gen: p.gen, pid: c.pid, pidfd: c.pidfd, ch: c.ch, started: p.now}
	if pre.all == nil {
		pre.all = make(map[int]*zygote)
	}
	pre.all[z.id], pre.current = z, z
	if err := p.poll.add(z.pidfd, eventIn, kindZygoteExit, z.id); err != nil {
		p.log.Error("watch zygote", "err", err)
	}
	if err := p.poll.add(z.ch, eventIn, kindZygote, z.id); err != nil {
		p.log.Error("watch zygote back-channel", "err", err)
	}
	p.log.Info("zygote spawned", "event", "spawn", "pid", z.pid, "generation", z.gen)
	p.changedState()
}

// becomeSubreaper makes the master the parent of orphaned descendants, so
// that children forked by a zygote are its own. It returns prctl's error.
func (pre *preload) becomeSubreaper() error {
	if pre.subreaper {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("preload: prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	pre.subreaper = true
	return nil
}

// launch starts the process of slot num: forked by the ready zygote, queued
// for the zygote that starts, or exec'd when there is none.
func (p *Pool) launch(num int) (child, error) {
	z := p.pre.current
	if !p.cfg.Preload || z == nil {
		return p.spawn(num)
	}
	master, end, err := backChannel()
	if err != nil {
		return child{}, fmt.Errorf("fork slot %d: %w", num, err)
	}
	p.pre.pending = append(p.pre.pending, pendingFork{num: num, fd: end, gen: p.gen})
	if z.state == zygoteReady {
		p.sendForks(z)
	}
	return child{pidfd: -1, ch: master, forked: true}, nil
}

// sendForks sends the queued Fork orders of z's generation to z.
func (p *Pool) sendForks(z *zygote) {
	rest := p.pre.pending[:0]
	for _, f := range p.pre.pending {
		if f.gen != z.gen {
			rest = append(rest, f)
			continue
		}
		err := protocol.SendFD(z.ch, protocol.Message{Type: protocol.Fork, Listener: uint16(f.num)}, f.fd)
		unix.Close(f.fd) // the zygote has its copy, or the slot gets EOF and is released
		if err != nil {
			p.log.Error("fork order", "slot", f.num, "pid", z.pid, "err", err)
			continue
		}
		z.forks++
		p.pre.forks++
	}
	p.pre.pending = rest
}

// dropPending forgets the queued Fork of slot num, if any: its child end
// is closed.
func (p *Pool) dropPending(num int) {
	for i, f := range p.pre.pending {
		if f.num == num {
			unix.Close(f.fd)
			p.pre.pending = append(p.pre.pending[:i], p.pre.pending[i+1:]...)
			return
		}
	}
}

// adopt takes a forked child's hello: slot s gets the PID it announced, a
// pidfd to watch and signal it by, and its slot's cgroup. It returns an
// error if no such process can be opened (gone already).
func (p *Pool) adopt(s *slot, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("%w: hello from a forked child with pid %d: pidfd_open: %v", protocol.ErrGarbage, pid, err)
	}
	s.pid, s.pidfd = pid, fd
	if err := p.poll.add(fd, eventIn, kindPidfd, s.num); err != nil {
		p.log.Error("watch child", "slot", s.num, "err", err)
	}
	if g := p.childGroup(s.num); g >= 0 {
		unix.Close(g)
		if err := p.mem.tree.Move(s.num, pid); err != nil {
			p.log.Warn("child cgroup", "slot", s.num, "pid", pid, "err", err)
		}
	}
	p.log.Debug("forked child said hello", "slot", s.num, "pid", pid)
	return nil
}

// release frees slot s whose process the master never knew (a fork that
// did not say hello): there is nothing to reap. A child forked after all
// reads EOF, exits, and is reaped as an orphan (reapOrphans).
func (p *Pool) release(s *slot) {
	p.dropPending(s.num)
	switch {
	case s.reason == "stop", s.reason == zygoteGone: // forget counts the latter
	default:
		p.stats.Respawned++
		p.replace++
		if s.gen == p.gen {
			p.backoff.fail(p.now, "fork: no hello")
		}
		p.log.Error("forked child gone before its hello", "event", "crash", "slot", s.num,
			"reason", s.reason, "failures", p.backoff.failures, "retry_in", p.backoff.delay())
	}
	from := s.state
	p.step(s, evReap)
	*s = slot{num: s.num, pidfd: -1, ch: -1}
	p.mode.moved(s, from, empty, evReap)
	p.ready.check(p)
	p.changedState()
}

// zygoteMessage reads one message from zygote id: its hello, or EOF.
func (p *Pool) zygoteMessage(id int) {
	z := p.pre.all[id]
	if z == nil || z.ch < 0 {
		return
	}
	buf := p.readBuf[:]
	n, err := rawRead(z.ch, buf)
	switch {
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		return
	case err != nil || n == 0:
		p.closeZygote(z)
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
		p.sendForks(z)
		p.changedState()
		return
	}
	p.pre.backoff.fail(p.now, err.Error())
	p.killZygote(z, "garbage", err.Error())
}

// closeZygote stops reading zygote z: it is going.
func (p *Pool) closeZygote(z *zygote) {
	if z.ch < 0 {
		return
	}
	p.poll.remove(z.ch)
	unix.Close(z.ch)
	z.ch = -1
	if z.state != zygoteEnding {
		z.state, z.deadline = zygoteEnding, p.now.Add(p.cfg.PingTimeout)
	}
}

// retireZygote tells zygote z to exit (a drain order); its children are
// not touched.
func (p *Pool) retireZygote(z *zygote) {
	if z.state == zygoteEnding {
		return
	}
	if z.ch >= 0 {
		var buf [protocol.MessageSize]byte
		_, _ = rawWrite(z.ch, protocol.Message{Type: protocol.Drain}.Encode(buf[:]))
	}
	z.state, z.deadline = zygoteEnding, p.now.Add(p.cfg.PingTimeout)
	p.forget(z)
}

// killZygote ends zygote z with SIGKILL. event names the log event, as for
// a child's kill: hung or garbage (a warning), or stop (not logged: the
// pool stops, and says why itself).
func (p *Pool) killZygote(z *zygote, event, why string) {
	if z.killed {
		return
	}
	z.killed = true
	if event != "stop" {
		p.log.Warn("killing zygote", "event", event, "pid", z.pid, "reason", why)
	}
	if err := unix.PidfdSendSignal(z.pidfd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		p.log.Error("signal zygote", "pid", z.pid, "err", err)
	}
	p.closeZygote(z)
	p.forget(z)
}

// forget makes z no longer the current zygote: its queued forks are
// released, to be exec'd or forked by the next one.
func (p *Pool) forget(z *zygote) {
	if p.pre.current != z {
		return
	}
	p.pre.current = nil
	released := 0
	for _, f := range append([]pendingFork(nil), p.pre.pending...) {
		if s := p.slots[f.num]; s.live() && s.unborn() {
			s.reason = zygoteGone
			p.closeChannel(s) // releases it
			released += boolInt(f.gen == p.gen)
		}
		p.dropPending(f.num)
	}
	// The scaler starts as many again (exec'd, or forked by the next
	// zygote); a zygote that dies again releases them again, which must
	// not add up.
	p.replace = max(p.replace, released)
	p.changedState()
}

// reapZygote collects zygote id's exit. One that dies before its hello, or
// young, counts as a zygote start failure, and as a start failure of the
// worker.
func (p *Pool) reapZygote(id int) {
	z := p.pre.all[id]
	if z == nil {
		return
	}
	var ws unix.WaitStatus
	pid, err := unix.Wait4(z.pid, &ws, unix.WNOHANG, nil)
	if pid == 0 || errors.Is(err, unix.EINTR) {
		return
	}
	asked := z.state == zygoteEnding && p.pre.current != z
	p.closeZygote(z)
	p.forget(z)
	p.poll.remove(z.pidfd)
	unix.Close(z.pidfd)
	delete(p.pre.all, id)
	p.keepTicking() // a quiet pool's next tick may be far: the new zygote starts from it
	exit := exitText(ws, err)
	if asked || p.stop != nil {
		p.log.Debug("zygote exited", "event", "exit", "pid", z.pid, "exit", exit)
		p.changedState()
		return
	}
	p.pre.restarts++
	if z.state == zygoteStarting || p.now.Sub(z.started) < youngAge {
		p.pre.backoff.fail(p.now, exit)
		if z.gen == p.gen {
			// The worker does not start: its children, forked or exec'd,
			// are started one at a time after a delay, as for any failure.
			p.backoff.fail(p.now, "zygote: "+exit)
		}
	} else {
		p.pre.backoff.ok()
	}
	p.log.Error("zygote died, children are exec'd until a new one is ready", "event", "crash", "pid", z.pid,
		"exit", exit, "generation", z.gen, "retry_in", p.pre.backoff.delay())
	p.changedState()
}

// tickZygotes starts a zygote where the generation lacks one and the
// backoff allows, ends zygotes that outlive their deadline, and reaps
// orphans.
func (p *Pool) tickZygotes() {
	for _, z := range p.pre.all {
		switch {
		case z.state == zygoteStarting && p.now.Sub(z.started) > p.cfg.StartTimeout:
			p.pre.backoff.fail(p.now, "no hello")
			p.killZygote(z, "hung", fmt.Sprintf("no hello within %v", p.cfg.StartTimeout))
		case z.state == zygoteEnding && !z.deadline.IsZero() && p.now.After(z.deadline):
			z.deadline = time.Time{}
			p.killZygote(z, "hung", "did not exit when told")
		}
	}
	if p.cfg.Preload && p.pre.current == nil && p.stop == nil && p.pre.backoff.allows(p.now, 1) > 0 {
		p.startZygote()
	}
	if p.pre.subreaper {
		p.reapOrphans()
	}
}

// stopZygotes drains every zygote (on stop), or kills them (kill).
func (p *Pool) stopZygotes(kill bool, why string) {
	for _, z := range p.pre.all {
		if kill {
			p.killZygote(z, "stop", why)
		} else {
			p.retireZygote(z)
		}
	}
	for _, f := range append([]pendingFork(nil), p.pre.pending...) {
		s := p.slots[f.num]
		s.reason = "stop"
		p.closeChannel(s) // releases it
		p.dropPending(f.num)
	}
}

// ZygoteInfo is the current generation's zygote, for a snapshot.
type ZygoteInfo struct {
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

// zygoteInfo returns the zygote line of a snapshot, or nil without preload.
func (p *Pool) zygoteInfo() *ZygoteInfo {
	if !p.cfg.Preload && p.pre.current == nil {
		return nil
	}
	in := &ZygoteInfo{State: "none", Generation: p.gen, Forked: p.pre.forks, Restarts: p.pre.restarts}
	if z := p.pre.current; z != nil {
		in.PID, in.Generation, in.State, in.Since, in.Forks = z.pid, z.gen, z.state.String(), z.started, z.forks
		if u, err := readUsage(z.pid); err == nil { // 20 µs, once a snapshot
			in.Memory, in.CPU = u.memory, u.cpu.Seconds()
		}
	}
	return in
}

// renewZygote gives a new generation its zygote: the old one is drained
// (its children stay, with their generation), a new one started.
func (p *Pool) renewZygote() {
	if z := p.pre.current; z != nil {
		p.retireZygote(z)
	}
	p.pre.backoff = backoff{}
	if p.cfg.Preload {
		p.startZygote()
	}
}

// settled reports whether the zygotes need no tick: none is starting or
// ending, and under preload the current one is ready.
func (pre *preload) settled(preload bool) bool {
	for _, z := range pre.all {
		if z.state != zygoteReady {
			return false
		}
	}
	return !preload || pre.current != nil
}

// unborn reports whether s is a forked child the master has not heard
// from: no PID known, nothing to reap.
func (s *slot) unborn() bool { return s.forked && s.pidfd < 0 }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
