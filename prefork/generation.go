package prefork

import (
	"fmt"
	"time"
)

// A generation is the children started with one configuration: the first
// by Run, each later one by Reload. A reload's generation takes over in
// two steps. It is up when StartChildren of its children have said hello
// (or StartTimeout passed with at least one up); it serves alone once the
// older generations are out of the accept path: every older child was told
// to drain, and each has exited but for those finishing the connection in
// hand (busy), which take no other (a drain wins over a waiting connection,
// docs/protocol.md). A reload's generation that cannot serve is abandoned
// instead (abandon.go): the one before it serves on.

// generations numbers the pool's generations and keeps the ones around the
// current: its start (ready), the one a reload replaced (prev) and the last
// one abandoned. Only the loop touches it.
type generations struct {
	cur       int        // the current generation: serving, or starting after a reload
	issued    int        // the highest started: an abandoned number is not reused
	ready     *readiness // the current generation's start
	prev      *previous  // the generation a reload replaced (abandon.go)
	abandoned *Abandoned // the last generation abandoned, for snapshots
}

// next makes a new generation current, to have want children up by
// deadline, and returns its number. The caller closed the last one's
// readiness.
func (g *generations) next(want int, deadline time.Time) int {
	g.issued++
	g.cur = g.issued
	g.ready = &readiness{gen: g.cur, want: want, reload: g.prev != nil, deadline: deadline, ch: make(chan struct{})}
	return g.cur
}

// started reports whether the current generation's start is done (see
// readiness); false before the first.
func (g *generations) started() bool { return g.ready != nil && g.ready.done }

// readyCh returns generation gen's readiness channel, or nil if gen is not
// the current generation or none started yet.
func (g *generations) readyCh(gen int) chan struct{} {
	if g.ready == nil || g.ready.gen != gen {
		return nil
	}
	return g.ready.ch
}

// replaced keeps cur, the generation a reload replaces, as prev. The one
// before it can start no child again: its certificates are closed, and
// its access-log file unless cur still uses it (accesslog.go).
func (g *generations) replaced(cur *previous) {
	if g.prev != nil {
		g.prev.spec.tls.close()
		closeLog(g.prev.spec.program.logFile, cur.spec.program.logFile)
	}
	g.prev = cur
}

// close closes the certificates of the generation a reload replaced, at
// Run's end.
func (g *generations) close() {
	if g.prev != nil {
		g.prev.spec.tls.close()
	}
}

// readiness tracks one generation's start. Its channel closes when the
// generation serves (see above; the first generation: once it is up), when
// it is abandoned, or when a later Reload supersedes it.
type readiness struct {
	gen      int
	want     int
	deadline time.Time
	ch       chan struct{}
	reload   bool // started by Reload: older children hand over to it
	up       bool // want children said hello, or the deadline passed with one up
	done     bool // ch is closed
}

// check moves r along: up, then (a reload's) serving alone, or abandoned
// when the deadline passes with none of its children up. Run's loop calls
// it on every turn; it walks the slots only until r is done.
func (r *readiness) check(p *Pool) {
	if r == nil || r.done {
		return
	}
	if !r.up {
		n := p.upCount(r.gen)
		switch {
		case n >= r.want:
		case p.now.Before(r.deadline):
			return
		case n == 0 && r.reload && r.gen == p.gens.cur:
			p.abandon(r.noStart(p.backoff, p.cfg.StartTimeout))
			return
		}
		r.up = true
	}
	if r.reload && r.gen == p.gens.cur && !p.handOver(r) {
		return
	}
	r.close(p)
}

// close closes r's channel, once.
func (r *readiness) close(p *Pool) {
	if r == nil || r.done {
		return
	}
	r.done = true
	close(r.ch)
	p.changedState()
}

// upCount returns the children of generation gen that are up: ready
// (their hello and first I came) and still there. One whose back-channel
// closed (exiting, waiting to be reaped) is not, whether it was up or died
// before its hello.
func (p *Pool) upCount(gen int) int {
	n := 0
	for _, s := range p.slots {
		if s.live() && s.gen == gen && !s.ending() && !s.state.starting() && s.state != exiting {
			n++
		}
	}
	return n
}

// noStart is why generation r is abandoned when none of its children said
// hello within timeout (StartTimeout), the start failures so far being b.
func (r *readiness) noStart(b backoff, timeout time.Duration) error {
	failing := ""
	if b.failures > 0 {
		failing = fmt.Sprintf("; worker failing (%s), %d in a row", b.lastExit, b.failures)
	}
	return fmt.Errorf("no child of generation %d said hello within start-timeout %v%s", r.gen, timeout, failing)
}

// handOver retires the older generations' children once generation r
// serves: it has an idle child (in exclusive mode: registered on the
// listeners), or the mode does not tell (shared), or r's deadline passed.
// It reports whether the older children are out of the accept path: each
// exited, or busy and told to drain.
func (p *Pool) handOver(r *readiness) bool {
	serves := p.genHasIdle(r.gen) || !p.cfg.Mode.SpeaksProtocol() || !p.now.Before(r.deadline)
	if !serves {
		return false
	}
	out := true
	for _, s := range p.slots {
		if !s.live() || s.gen == r.gen {
			continue
		}
		p.retire(s, "old generation")
		out = out && s.ending() && (s.state == busy || s.state == movingBusy)
	}
	return out
}

// startGeneration starts StartChildren children of a new generation.
func (p *Pool) startGeneration() {
	p.gens.ready.close(p) // superseded: whoever waits for it learns so from the generation
	p.gens.next(p.cfg.StartChildren, p.now.Add(p.cfg.StartTimeout))
	p.scaler.ramp = 1
	p.backoff = backoff{}
	p.launcher = newLauncher(p, p.launcher) // a reload may turn Preload on
	p.launcher.renew()
	for range p.cfg.StartChildren {
		p.start()
	}
	p.pace.next = p.now.Add(p.cfg.tickPeriod())
	p.changedState()
}

// Ready returns a channel closed when the first generation's start children
// have all said hello (or StartTimeout passed first). In shared mode that is
// as soon as they are started. The channel is never closed if Run is never called.
func (p *Pool) Ready() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		var r <-chan struct{}
		if p.call(func() { r = p.gens.readyCh(1) }) == nil && r != nil {
			select {
			case <-r:
			case <-p.done:
			}
		}
		close(ch)
	}()
	return ch
}

// Reload starts a new generation of children with cfg and hands the pool
// over to it: none is stopped mid-connection, and old idle children keep
// taking connections until the new generation has an idle child; then
// every old child is told to drain. The listeners stay as they are. It
// returns the new generation's number and a channel closed when that
// generation serves alone (see the top of generation.go: old children
// exited, or finishing their last connection), when the generation was
// abandoned (a Snapshot's Abandoned says why), or when a later Reload
// superseded it (a Snapshot's Generation then differs). It returns an
// error instead: a *FieldError (a certificate for no listener included),
// an access-log file that cannot be opened, an attempt to change the
// accept mode or filter, a memfd that cannot be made for a certificate,
// or ErrStopped.
func (p *Pool) Reload(cfg Config) (int, <-chan struct{}, error) {
	if err := cfg.Validate(); err != nil {
		return 0, nil, err
	}
	logFile, err := openAccessLog(cfg) // accesslog.go
	if err != nil {
		return 0, nil, err
	}
	var ready chan struct{}
	var gen int
	callErr := p.call(func() {
		if _, err = proxyNetworks(cfg, p.listeners); err != nil {
			return
		}
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
		files, ferr := newTLSFiles(cfg.TLS, p.listeners)
		if ferr != nil {
			err = ferr
			return
		}
		p.gens.replaced(p.current())
		p.cfg, p.spec = cfg, newChildSpec(cfg, p.listeners, logFile, files)
		logFile = nil
		p.startGeneration()
		p.stats.Reloads++
		p.log.Info("reload: new generation", "event", "reload", "generation", p.gens.cur)
		ready, gen = p.gens.ready.ch, p.gens.cur
	})
	closeLog(logFile, nil) // not taken: the reload was refused
	if callErr != nil {
		return 0, nil, callErr
	}
	return gen, ready, err
}
