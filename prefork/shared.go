package prefork

import "golang.org/x/sys/unix"

// sharedMode is the shared accept mode: children that do not speak the
// protocol accept by themselves, and the master only keeps them running. It
// cannot scale on idleness it does not see: the pool stays at
// StartChildren.
type sharedMode struct {
	holdsNone
	p *Pool
}

func (m *sharedMode) table() *table { return sharedTable }

// setup: under the data filter the kernel defers the listeners' accepts
// (deferData).
func (m *sharedMode) setup() error { return deferData(m.p.cfg, m.p.listeners) }

func (m *sharedMode) readable(*listener) {}

func (m *sharedMode) moved(*slot, state, state, event) {}

func (m *sharedMode) tick() {}

// hush: nothing a connection changes needs the master: the pool is fixed
// and the stuck check needs idle children, which shared mode does not see.
func (m *sharedMode) hush() {}

func (m *sharedMode) stop() {}

func (m *sharedMode) wantReports() bool { return true }

// drain sends SIGTERM: a shared-mode child has no back-channel.
func (m *sharedMode) drain(s *slot) {
	m.p.signal(s, unix.SIGTERM)
	s.deadline = m.p.now.Add(m.p.cfg.GracefulTimeout)
}

// scale keeps the pool at StartChildren, and retires the old generation
// once the new one is complete.
func (m *sharedMode) scale() {
	p := m.p
	want := p.cfg.StartChildren - p.poolState().Children
	p.scaler.settled = want == 0
	for range p.backoff.allows(p.now, max(want, 0)) {
		if !p.start() {
			break
		}
	}
	if want <= 0 {
		for _, s := range p.slots {
			if s.live() && s.gen != p.gens.cur {
				p.retire(s, "old generation")
			}
		}
	}
}
