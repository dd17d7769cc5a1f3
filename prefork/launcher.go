package prefork

// launcher is how a slot's child comes into being and goes: exec'd from the
// worker program (execLauncher, below), or forked by a zygote under
// Config.Preload (zygotes, zygote.go). The loop calls it; it owns the
// processes that are no slot's (zygotes, orphans) and knows which slots
// have no process the master can see yet. Every method runs on the loop.
type launcher interface {
	// launch starts slot num's process. It returns the child, or the
	// error that counts as a start failure.
	launch(num int) (child, error)
	// started watches slot s's process, which launch started, and logs it.
	started(s *slot)
	// hello takes slot s's hello, in which the child announced pid. It
	// returns an error (protocol.ErrGarbage) if the slot cannot be given
	// that process.
	hello(s *slot, pid int) error
	// closed is told that slot s's back-channel closed; a slot whose
	// process the master never knew is freed there, for nothing is to reap.
	closed(s *slot)
	// event takes an epoll event of kindLauncher or kindLauncherExit.
	event(k kind, index int)
	// renew is told that a new generation starts (p.gens.cur is its number).
	renew()
	// abandon is told that generation gen is abandoned (abandon.go).
	abandon(gen int)
	// tick does the launcher's periodic work.
	tick()
	// stop drains (kill false) or kills (kill true) the launcher's own
	// processes, and releases the slots that wait for one.
	stop(kill bool, why string)
	// settled reports whether the launcher needs no tick (quiet.go).
	settled() bool
	// running reports whether the launcher still has processes to reap:
	// Run does not return before they are gone.
	running() bool
	// info returns the launcher's line of a snapshot, or nil.
	info() *zygoteInfo
}

// newLauncher returns how the children of p's current config come into
// being: was if it forks (it exec's too, while it has no zygote or
// without Preload), else the one the config asks for.
func newLauncher(p *Pool, was launcher) launcher {
	if zs, ok := was.(*zygotes); ok {
		return zs // its zygotes live on; without Preload it exec's
	}
	if p.cfg.Preload {
		return &zygotes{p: p, exec: execLauncher{p}}
	}
	return execLauncher{p}
}

// execLauncher starts every child by an exec of the worker program (spawn.go).
type execLauncher struct{ p *Pool }

func (e execLauncher) launch(num int) (child, error) { return e.p.spawn(num, slotEnv(num)) }

func (e execLauncher) started(s *slot) {
	p := e.p
	if err := p.poll.add(s.pidfd, eventIn, kindPidfd, s.num); err != nil {
		p.log.Error("watch child", "slot", s.num, "err", err)
	}
	p.log.Info("spawned", "event", "spawn", "slot", s.num, "pid", s.pid, "generation", s.gen)
}

func (execLauncher) hello(*slot, int) error { return nil }
func (execLauncher) closed(*slot)           {}
func (execLauncher) event(kind, int)        {}
func (execLauncher) renew()                 {}
func (execLauncher) abandon(int)            {}
func (execLauncher) tick()                  {}
func (execLauncher) stop(bool, string)      {}
func (execLauncher) settled() bool          { return true }
func (execLauncher) running() bool          { return false }
func (execLauncher) info() *zygoteInfo      { return nil }
