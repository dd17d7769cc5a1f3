package prefork

import (
	"errors"
	"fmt"
	"time"
)

// ErrStopped is returned by calls made after Run has returned.
var ErrStopped = errors.New("pool stopped")

// readiness tracks one generation's start: it is ready when StartChildren
// children of that generation have said hello, or when StartTimeout has
// passed (a failing worker must not hold systemd's start job forever; the
// status line shows the failure instead).
type readiness struct {
	gen      int
	want     int
	deadline time.Time
	ch       chan struct{}
}

func (r *readiness) check(p *Pool) {
	if r == nil || isClosed(r.ch) {
		return
	}
	n := 0
	for _, s := range p.slots {
		if s.live() && s.gen == r.gen && !s.state.starting() {
			n++
		}
	}
	if n >= r.want || !p.now.Before(r.deadline) {
		close(r.ch)
		p.changedState()
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// stopping is the drain that follows the end of Run's context.
type stopping struct {
	deadline time.Time // SIGKILL whatever still runs then
	killed   bool
	drained  bool // the children were told to drain (drainChildren)
}

// startGeneration starts StartChildren children of a new generation.
func (p *Pool) startGeneration() {
	if p.ready != nil && !isClosed(p.ready.ch) {
		close(p.ready.ch) // superseded: whoever waits for it learns so from the generation
	}
	p.gen++
	p.ramp = 1
	p.backoff = backoff{}
	p.renewZygote() // zygote.go, under Preload
	p.ready = &readiness{gen: p.gen, want: p.cfg.StartChildren,
		deadline: p.now.Add(p.cfg.StartTimeout), ch: make(chan struct{})}
	for range p.cfg.StartChildren {
		p.start()
	}
	p.nextTick = p.now.Add(p.tickPeriod())
	p.changedState()
}

// Ready returns a channel closed when the first generation's start children
// have all said hello (or StartTimeout passed first). In shared mode that is
// as soon as they are started. The channel is never closed if Run is never called.
func (p *Pool) Ready() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		var r <-chan struct{}
		if p.call(func() { r = p.readyCh(1) }) == nil && r != nil {
			select {
			case <-r:
			case <-p.done:
			}
		}
		close(ch)
	}()
	return ch
}

func (p *Pool) readyCh(gen int) chan struct{} {
	if p.ready == nil || p.ready.gen != gen {
		return nil
	}
	return p.ready.ch
}

// Reload starts a new generation of children with cfg and retires the old
// one as its children go idle: none is stopped mid-connection, and old idle
// children keep taking connections until the new generation has an idle
// child. The listeners stay as they are. It returns the new generation's
// number and a channel closed when that generation is ready (see Ready),
// when its StartTimeout passed first, or when a later Reload superseded it
// (a Snapshot then tells which). It returns an error instead: a
// *FieldError, an attempt to change the accept mode or filter, or ErrStopped.
func (p *Pool) Reload(cfg Config) (int, <-chan struct{}, error) {
	if err := cfg.Validate(); err != nil {
		return 0, nil, err
	}
	var ready chan struct{}
	var gen int
	var err error
	callErr := p.call(func() {
		if cfg.Mode != p.cfg.Mode {
			err = fmt.Errorf("reload: accept mode %v cannot change to %v without a restart", p.cfg.Mode, cfg.Mode)
			return
		}
		if cfg.Filter != p.cfg.Filter {
			err = fmt.Errorf("reload: accept filter %v cannot change to %v without a restart", p.cfg.Filter, cfg.Filter)
			return
		}
		if p.stop != nil {
			err = ErrStopped
			return
		}
		p.cfg, p.program, p.env = cfg, program(cfg), childEnv(cfg, p.listeners)
		p.startGeneration()
		p.stats.Reloads++
		p.log.Info("reload: new generation", "event", "reload", "generation", p.gen)
		ready, gen = p.ready.ch, p.gen
	})
	if callErr != nil {
		return 0, nil, callErr
	}
	return gen, ready, err
}

// beginStop starts the drain that ends Run: no new connections, then the
// children drain (drainChildren).
func (p *Pool) beginStop() {
	p.stop = &stopping{deadline: p.now.Add(p.cfg.GracefulTimeout)}
	p.mode.stop()
	p.stopZygotes(false, "stop")
	if held := p.mode.holdCounts().held; held > 0 {
		p.log.Info("stopping: handing held connections to children first", "event", "stop", "held", held)
	}
	p.drainChildren()
	p.changedState()
}

// drainChildren tells every live child to drain, once the mode holds no
// connection: one the master accepted is the pool's to answer, so the
// children keep taking held connections until each was handed over,
// closed by its client, or timed out (handoff.go). Run's loop calls it on
// every turn of a stop; it drains once.
func (p *Pool) drainChildren() {
	if p.stop == nil || p.stop.drained || p.mode.holdCounts().held > 0 {
		return
	}
	p.stop.drained = true
	for _, s := range p.slots {
		if s.live() {
			p.retire(s, "stop")
		}
	}
	p.log.Info("stopping: draining children", "event", "stop", "children", p.liveCount())
	p.changedState()
}

// checkStop kills what outlives the graceful timeout, and closes what the
// mode still holds.
func (p *Pool) checkStop() {
	if p.stop.killed || p.now.Before(p.stop.deadline) {
		return
	}
	p.stop.killed = true
	p.killAll("graceful timeout")
	p.mode.stop()
}

func (p *Pool) killAll(why string) {
	p.stopZygotes(true, why)
	for _, s := range p.slots {
		if s.live() && s.fate != killed {
			p.kill(s, "stop", why)
		}
	}
}

// Done returns a channel closed when Run has returned.
func (p *Pool) Done() <-chan struct{} { return p.done }
