package prefork

import (
	"golang.org/x/sys/unix"
)

// The master's file descriptors are a budget: RLIMIT_NOFILE, less what it
// needs to run the pool whatever it holds. Each slot costs it two (the
// back-channel and the pidfd), for up to two generations at once (a reload)
// and a zygote; each listener one; and it keeps fdReserve for itself (epoll
// sets, timer, signals, the notify socket, control and metrics clients,
// /proc and cgroup reads, a spawn's socketpair). What is left bounds the
// connections it holds: --max-held, or all of it up to maxAutoHeld when
// --max-held is 0. So holding connections never takes away its ability to
// spawn, to take a connection a child gives back, or to notify systemd.

const (
	fdReserve   = 64
	fdsPerSlot  = 2
	minHeld     = 16    // held even when the budget says less: a limit so low is a misconfiguration, logged
	maxAutoHeld = 16384 // the default (--max-held 0) beyond what the fds allow: about 70 MB of kernel and master memory
)

// heldBudget returns the most connections the master holds under cfg with
// listeners listeners and a limit of nofile descriptors, and whether the
// fd limit, not cfg.MaxHeld, decided it.
func heldBudget(cfg Config, listeners, nofile int) (int, bool) {
	left := nofile - fdReserve - listeners - fdsPerSlot*(2*cfg.MaxChildren+1)
	left = max(left, minHeld)
	switch {
	case cfg.MaxHeld == 0:
		return min(left, maxAutoHeld), left < maxAutoHeld
	case cfg.MaxHeld > left:
		return left, true
	}
	return cfg.MaxHeld, false
}

// fdLimit returns the process's RLIMIT_NOFILE (the soft limit, which Go
// raises to the hard one at start), or a large number if it cannot tell.
func fdLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 1 << 30
	}
	return int(rl.Cur)
}
