package main

import (
	"context"
	"errors"
	"time"

	"github.com/actd/actd/config"
	"github.com/actd/actd/notify"
)

// listenSide binds the control socket and the metrics address, so that a
// bad one stops actd at start. It returns 78 and the error if the control
// socket's path holds something else (a directory), 71 and the error if a
// bind fails.
func (m *master) listenSide() (int, error) {
	var err error
	if path := controlPath(m.cfg.ControlSocket); path != "" {
		if m.control, err = listenControl(path); err != nil {
			var ce *config.Error
			if errors.As(err, &ce) {
				return exitConfig, err
			}
			return exitOSErr, err
		}
		if err := shareControl(path, m.cfg.ControlGroup); err != nil { // controlgroup.go
			return exitOSErr, err
		}
	}
	if addr := m.cfg.MetricsListen; addr != "" {
		if m.metrics, err = listenMetrics(addr); err != nil {
			return exitOSErr, err
		}
	}
	return exitOK, nil
}

// addSideServices puts in g what runs beside the pool: the STATUS= coalescer,
// the status reporter, the watchdog, the control socket and the metrics
// server.
func (m *master) addSideServices(g *group) {
	addContext(g, "status", m.report.status.Run)
	addContext(g, "reporter", m.report.run)
	if interval, ok := notify.WatchdogInterval(); ok {
		wd := notify.Watchdog{Notifier: m.notifier, Interval: interval, Healthy: m.healthy(interval), Logger: m.log}
		addContext(g, "watchdog", wd.Run)
	}
	if m.control != nil {
		addContext(g, "control socket", m.serveControl)
	}
	if m.metrics != nil {
		addContext(g, "metrics", m.serveMetrics)
	}
}

// addContext adds to g a member that runs until its context is cancelled.
func addContext(g *group, name string, execute func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	g.add(name, func() error { return execute(ctx) }, func(error) { cancel() })
}

// healthy returns the watchdog's health check: the master loop answers a
// snapshot quickly, and the snapshot says the pool works.
func (m *master) healthy(interval time.Duration) func() bool {
	wait := min(interval/4, time.Second)
	return func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		snap, err := m.pool.Snapshot(ctx)
		if err != nil {
			m.log.Warn("watchdog: master loop does not answer", "event", "wedged", "err", err)
			return false
		}
		ok, why := snap.Healthy(interval / 2)
		if !ok {
			m.log.Warn("watchdog: pool not healthy", "event", "wedged", "why", why)
		}
		return ok
	}
}
