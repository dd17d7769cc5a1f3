package notify

import (
	"context"
	"errors"
	"log/slog"
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"
)

// errNoInterval is returned by Watchdog.Run when Interval is not positive.
var errNoInterval = errors.New("watchdog: interval must be positive")

// WatchdogInterval returns systemd's watchdog interval (WatchdogSec=) from
// WATCHDOG_USEC, through go-systemd's SdWatchdogEnabled.
//
// It returns 0, false when WATCHDOG_USEC is unset, is not a positive number,
// or WATCHDOG_PID names another process; the environment is left as it is.
func WatchdogInterval() (time.Duration, bool) {
	d, err := sddaemon.SdWatchdogEnabled(false)
	if err != nil || d <= 0 {
		return 0, false
	}
	return d, true
}

// Watchdog pets systemd's watchdog while the service is healthy.
//
// Run sends WATCHDOG=1 at once and then every Interval/2, each time only if
// Healthy returns true: at most two pings per interval, which is what
// systemd's own sd_watchdog_enabled advice asks for, and never more.
//
// While Healthy returns false, Run sends nothing, and systemd's watchdog
// fires by itself at most Interval after the last ping. Run never sends
// WATCHDOG=trigger: waiting out the interval gives a stuck service the time
// systemd was told to give it, and a caller that knows it is broken for good
// calls [Notifier.WatchdogTrigger] itself.
type Watchdog struct {
	Notifier *Notifier     // where pings go; nil sends nothing
	Interval time.Duration // systemd's interval, from WatchdogInterval
	Healthy  func() bool   // nil means always healthy; must return quickly
	Logger   *slog.Logger  // health changes and send errors; nil drops them
}

// Run pets the watchdog until ctx is done.
//
// It returns nil when ctx is done, or errNoInterval at once when Interval is
// not positive. Send errors do not stop it; they go to Logger.
func (w Watchdog) Run(ctx context.Context) error {
	if w.Interval <= 0 {
		return errNoInterval
	}
	ticker := time.NewTicker(w.Interval / 2)
	defer ticker.Stop()
	healthy := true
	for {
		healthy = w.check(healthy)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// check pings if the service is healthy, logs a change of health, and
// returns the health it saw.
func (w Watchdog) check(wasHealthy bool) bool {
	healthy := w.Healthy == nil || w.Healthy()
	switch {
	case healthy && !wasHealthy:
		w.log(slog.LevelInfo, "watchdog: healthy again, pinging systemd")
	case !healthy && wasHealthy:
		w.log(slog.LevelWarn, "watchdog: not healthy, no longer pinging systemd", "interval", w.Interval)
	}
	if !healthy {
		return false
	}
	if err := w.Notifier.Watchdog(); err != nil {
		w.log(slog.LevelWarn, "watchdog: ping failed", "err", err)
	}
	return true
}

// log writes to Logger if there is one.
func (w Watchdog) log(level slog.Level, msg string, args ...any) {
	if w.Logger != nil {
		w.Logger.Log(context.Background(), level, msg, args...)
	}
}
