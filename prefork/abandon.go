package prefork

import (
	"errors"
	"time"
)

// A generation's worker may turn out unable to do what the settings ask:
// its zygote says hello without the fork capability under Preload
// (zygote.go), its children without the handoff capability under an
// accept filter (handoff.go), or none of its children says hello within
// StartTimeout (generation.go). At the first generation that stops the
// pool (fail: the settings cannot work). A reload's generation is
// abandoned instead: its zygote and its children are told to drain,
// and the generation before it, with its settings, serves on as if the
// reload had not happened; the reload's waiter learns why from the
// snapshot (Abandoned).

// previous is the generation a reload replaced: what abandon restores.
type previous struct {
	gen     int
	cfg     Config
	spec    childSpec
	backoff backoff
}

// current returns the running generation, for a reload to keep.
func (p *Pool) current() *previous {
	return &previous{gen: p.gens.cur, cfg: p.cfg, spec: p.spec, backoff: p.backoff}
}

// Abandoned is a reload's generation that the pool gave up, in a snapshot.
type Abandoned struct {
	Generation int       `json:"generation"`
	Serving    int       `json:"serving"`       // the generation that serves on
	Key        string    `json:"key,omitempty"` // the setting the worker cannot do (a *FieldError's Field), if any
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

// unfit takes the hello of child s, which cannot do what the settings ask
// (err): a child of the current generation abandons it; one of an older
// generation (respawned from a worker replaced on disk since) is told to
// drain (a child of an abandoned generation was told so already).
func (p *Pool) unfit(s *slot, err error) {
	switch {
	case s.gen == p.gens.cur:
		p.abandon(err)
		return
	case s.ending():
		return
	}
	p.log.Error("child of an old generation cannot serve, retiring it", "event", "retire", "slot", s.num, "pid", s.pid, "err", err)
	p.retire(s, "cannot serve")
}

// abandon gives up the current generation, whose worker cannot do what err
// says: if a reload started it, the generation before it serves on with
// its settings; the first generation (or one restored already) stops the
// pool (fail).
func (p *Pool) abandon(err error) {
	prev, gen := p.gens.prev, p.gens.cur
	if prev == nil {
		p.fail(err)
		return
	}
	a := &Abandoned{Generation: gen, Serving: prev.gen, Reason: err.Error(), At: p.now}
	if fe := (*FieldError)(nil); errors.As(err, &fe) {
		a.Key = fe.Field
	}
	p.gens.abandoned, p.gens.prev = a, nil
	// Closed first: retiring gen's zygote and children below frees their
	// slots, and each free checks the readiness again (reap.go), which
	// would abandon gen a second time, with no generation left to serve
	// on (fail), if it were still open.
	p.gens.ready.close(p)
	p.log.Error("reload: the new generation cannot serve, the old one serves on", "event", "reload",
		"generation", gen, "serving", prev.gen, "err", err)
	replace := p.scaler.replace // forget counts the forks it releases: not to be replaced
	p.launcher.abandon(gen)     // its zygote, if any, drains; tick starts one for the generation served on
	p.retireGen(gen, "generation abandoned")
	p.scaler.replace = replace
	p.spec.tls.close()
	closeLog(p.spec.program.logFile, prev.spec.program.logFile) // accesslog.go
	p.gens.cur, p.cfg, p.spec, p.backoff = prev.gen, prev.cfg, prev.spec, prev.backoff
	p.pace.wake(p.now, p.cfg.tickPeriod())
	p.changedState()
}

// retireGen tells every child of generation gen to drain.
func (p *Pool) retireGen(gen int, why string) {
	for _, s := range p.slots {
		if s.live() && s.gen == gen {
			p.retire(s, why)
		}
	}
}
