package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/actd/actd/activation"
)

// serveMetrics serves the pool's numbers in the Prometheus text format on
// addr until ctx is done.
func serveMetrics(ctx context.Context, addr string, m *master) error {
	network, address, err := activation.ParseAddr(addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, err := m.statusDoc("")
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		writeMetrics(w, doc)
	}), ReadHeaderTimeout: 5 * time.Second}
	context.AfterFunc(ctx, func() { srv.Close() })
	go srv.Serve(ln)
	return nil
}

// writeMetrics writes doc as Prometheus gauges and counters.
func writeMetrics(w io.Writer, doc statusDoc) {
	s := doc.Snapshot
	gauge := func(name, help string, v any) {
		fmt.Fprintf(w, "# HELP actd_%s %s\n# TYPE actd_%s gauge\nactd_%s %v\n", name, help, name, name, v)
	}
	counter := func(name, help string, v uint64) {
		fmt.Fprintf(w, "# HELP actd_%s_total %s\n# TYPE actd_%s_total counter\nactd_%s_total %d\n", name, help, name, name, v)
	}
	gauge("children_busy", "Children serving a connection.", s.Busy)
	gauge("children_idle", "Children waiting for a connection.", s.Idle)
	gauge("children_starting", "Children started that have not said hello.", s.Starting)
	gauge("children_draining", "Children finishing before they exit.", s.Draining)
	gauge("children_max", "The --max-children setting.", s.Max)
	gauge("accept_queue", "Connections waiting in the accept queues.", s.Queue)
	gauge("start_failures", "Worker start failures in a row.", s.Failures)
	counter("connections", "Connections accepted by children.", s.Stats.Served)
	counter("spawned", "Children started.", s.Stats.Spawned)
	counter("respawned", "Children that died or were killed unasked.", s.Stats.Respawned)
	counter("hung", "Children that missed a deadline.", s.Stats.Hung)
	counter("recycled", "Children retired after --max-conn-per-child.", s.Stats.Recycled)
	counter("overloads", "Times a connection waited with no idle child.", s.Stats.Overloads)
	counter("garbage", "Children killed for a bad message.", s.Stats.Garbage)
}
