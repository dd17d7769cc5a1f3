package main

import (
	"context"
	"time"

	"github.com/actd/actd/notify"
)

// startSideServices starts what runs beside the pool until ctx is done: the
// status reporter, the watchdog, the control socket and the metrics server.
func (m *master) startSideServices(ctx context.Context) {
	coalescer := notify.NewStatusCoalescer(m.notifier, notify.DefaultStatusPeriod, m.log)
	m.report = &reporter{pool: m.pool, status: coalescer}
	go coalescer.Run(ctx)
	go m.report.run(ctx)
	if interval, ok := notify.WatchdogInterval(); ok {
		wd := notify.Watchdog{Notifier: m.notifier, Interval: interval, Healthy: m.healthy(interval), Logger: m.log}
		go wd.Run(ctx)
	}
	if path := controlPath(m.cfg.ControlSocket); path != "" {
		if err := serveControl(ctx, path, m); err != nil {
			m.log.Error("control socket", "path", path, "err", err)
		}
	}
	if addr := m.cfg.MetricsListen; addr != "" {
		if err := serveMetrics(ctx, addr, m); err != nil {
			m.log.Error("metrics", "addr", addr, "err", err)
		}
	}
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
