package prefork

import (
	"time"

	"golang.org/x/sys/unix"
)

// How a child ended by a SIGKILL the master did not send (killedBy).
const (
	notKilled      = ""
	killedByOOM    = "oom"    // the unit's OOM counter rose
	killedBySignal = "signal" // someone else: kill -9, a watchdog, a runtime
)

// killedBy tells whether slot s's child, which ended with ws, was killed
// from outside: by the kernel's OOM killer when the OOM counter of the
// unit's memory group rose since the last exit that accounted for it (one
// count per kill, so a burst of kills is told apart child by child), by
// someone else otherwise. It returns notKilled for any other end, and for a
// child the master killed itself.
func (m *memory) killedBy(s *slot, ws unix.WaitStatus) string {
	if s.fate == killed || !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		return notKilled
	}
	if !m.oomKnown {
		return killedBySignal
	}
	if n, ok := m.groups.OOMKills(); ok && n > m.oomKills {
		m.oomKills++
		return killedByOOM
	}
	return killedBySignal
}

// logKill logs a child killed from outside, with the figures that say why:
// its last memory reading and the unit's OOM counter.
func (m *memory) logKill(s *slot, by, exit string, age time.Duration) {
	if by == killedByOOM {
		m.log.Warn("child killed by the kernel's OOM killer", "event", "oom", "slot", s.num, "pid", s.pid,
			"memory", s.usage.memory, "oom_kills", m.oomKills, "served", s.served, "age", age)
		return
	}
	m.log.Warn("child killed by a signal actd did not send", "event", "crash", "slot", s.num, "pid", s.pid,
		"exit", exit, "memory", s.usage.memory, "served", s.served, "age", age)
}

// replaceNow starts the replacement of a child killed from outside at once,
// rather than at the next scale: connections may be waiting for it. The
// backoff still rules while a failure streak runs.
func (p *Pool) replaceNow() {
	if p.stop != nil || p.scaler.replace == 0 || p.poolState().Children >= p.cfg.MaxChildren {
		return
	}
	if p.backoff.allows(p.now, 1) > 0 && p.start() {
		p.scaler.replace--
	}
}
