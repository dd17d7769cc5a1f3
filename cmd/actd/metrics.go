package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/actd/actd/activation"
	"github.com/actd/actd/prefork"
)

// Bounds of the metrics server: no number of scrapers takes more than
// metricsClients of the master's fds, or holds one longer than a timeout.
const (
	metricsClients = 16
	metricsIdle    = 5 * time.Second // an idle keep-alive connection is closed after this
	metricsRead    = 5 * time.Second // to read a whole request
	metricsWrite   = 5 * time.Second // to write the answer
)

// listenMetrics binds addr. It returns an error for a malformed address or
// a failed bind (address in use).
func listenMetrics(addr string) (net.Listener, error) {
	network, address, err := activation.ParseAddr(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics-listen: %w", err)
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, fmt.Errorf("metrics-listen: %w", err)
	}
	return limitListener(ln, metricsClients), nil
}

// serveMetrics serves the pool's numbers in the Prometheus text format on
// /metrics, and the status page at --status-path if set (404 elsewhere),
// until ctx is done. It returns nil then, or the
// error that stopped the server.
func (m *master) serveMetrics(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		doc, err := m.statusDoc(r.Context(), "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		writeMetrics(w, doc, m.started)
	})
	if path := m.cfg.StatusPath; path != "" {
		mux.HandleFunc(path, m.serveStatusPage) // statuspage.go
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: metricsRead, ReadTimeout: metricsRead,
		WriteTimeout: metricsWrite, IdleTimeout: metricsIdle, MaxHeaderBytes: 8 << 10}
	context.AfterFunc(ctx, func() { srv.Close() })
	if err := srv.Serve(m.metrics); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// metricsWriter writes Prometheus text-format families.
type metricsWriter struct{ w io.Writer }

// family writes the HELP and TYPE lines of actd_name (or name, when it
// already has a prefix such as process_).
func (mw metricsWriter) family(name, typ, help string) string {
	if !strings.HasPrefix(name, "process_") {
		name = "actd_" + name
	}
	fmt.Fprintf(mw.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	return name
}

// sample writes one sample of name with labels as name/value pairs.
func (mw metricsWriter) sample(name string, v any, labels ...string) {
	var b strings.Builder
	for i := 0; i+1 < len(labels); i += 2 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=\"%s\"", labels[i], labelEscaper.Replace(labels[i+1]))
	}
	if b.Len() > 0 {
		name += "{" + b.String() + "}"
	}
	fmt.Fprintf(mw.w, "%s %v\n", name, v)
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func (mw metricsWriter) gauge(name, help string, v any) {
	mw.sample(mw.family(name, "gauge", help), v)
}

func (mw metricsWriter) counter(name, help string, v uint64) {
	mw.sample(mw.family(name+"_total", "counter", help), v)
}

// writeMetrics writes doc as Prometheus gauges and counters; started is
// when the master process started.
func writeMetrics(w io.Writer, doc statusDoc, started time.Time) {
	mw := metricsWriter{w}
	s := doc.Snapshot
	mw.sample(mw.family("build_info", "gauge", "Always 1; the version of the running actd."), 1, "version", doc.Version)
	mw.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
		float64(started.UnixNano())/1e9)
	name := mw.family("children", "gauge", "Children by state: starting, idle, busy, running (shared mode), draining.")
	for _, st := range []struct {
		state string
		n     int
	}{{"starting", s.Starting}, {"idle", s.Idle}, {"busy", s.Busy}, {"running", s.Running}, {"draining", s.Draining}} {
		mw.sample(name, st.n, "state", st.state)
	}
	mw.gauge("children_max", "The --max-children setting.", s.Max)
	name = mw.family("listen_queue", "gauge", "Connections waiting in a listener's accept queue.")
	for _, l := range s.Listeners {
		if l.Queue >= 0 {
			mw.sample(name, l.Queue, "listener", l.Name)
		}
	}
	mw.gauge("generation", "The generation of children being started; each reload adds one.", s.Generation)
	mw.gauge("start_failures", "Worker start failures in a row.", s.Failures)
	mw.counter("connections", "Connections accepted by children.", s.Stats.Served)
	mw.counter("spawned", "Children started.", s.Stats.Spawned)
	mw.counter("respawned", "Children that died or were killed unasked.", s.Stats.Respawned)
	mw.counter("hung", "Children that missed a deadline.", s.Stats.Hung)
	mw.counter("slow_requests", "Busy spells longer than --slow-request.", s.Stats.Slow)
	mw.counter("recycled", "Children retired after --max-conn-per-child.", s.Stats.Recycled)
	mw.counter("overloads", "Times a connection waited with no idle child.", s.Stats.Overloads)
	mw.counter("garbage", "Children killed for a bad message.", s.Stats.Garbage)
	mw.counter("pings_failed", "Pings not answered in time.", s.Stats.PingsFailed)
	mw.counter("reloads", "Generations started by a reload.", s.Stats.Reloads)
	mw.counter("memory_recycled", "Children retired over --max-child-memory.", s.Stats.MemRecycled)
	mw.counter("oom_killed", "Children killed by the kernel's OOM killer.", s.Stats.OOMKilled)
	mw.counter("orphans_killed", "Processes a child left in its cgroup, killed as it was reaped.", s.Stats.Orphans)
	writeChildMetrics(mw, s.Slots)
	writeRequestMetrics(mw, s) // metrics_requests.go
	if s.Held != nil {
		writeHeldMetrics(mw, s)
	}
	if z := s.Zygote; z != nil {
		ready := 0
		if z.State == "ready" {
			ready = 1
		}
		mw.gauge("zygote_ready", "1 while the current generation's zygote (--preload) takes fork orders, else 0.", ready)
		mw.counter("forks", "Children forked by zygotes (--preload).", z.Forked)
		mw.counter("zygote_restarts", "Zygotes that died unasked and were replaced.", z.Restarts)
		mw.gauge("zygote_memory_bytes", "Resident memory (RSS) of the current generation's zygote (--preload).", z.Memory)
	}
}

// writeHeldMetrics writes what the master holds under an accept filter.
func writeHeldMetrics(mw metricsWriter, s prefork.Snapshot) {
	h := s.Held
	name := mw.family("held", "gauge", "Connections the master holds under --accept-filter: waiting (not ready), ready (for an idle child), parked (given back between keep-alive requests).")
	mw.sample(name, h.Held-h.Ready-h.Parked, "state", "waiting")
	mw.sample(name, h.Ready, "state", "ready")
	mw.sample(name, h.Parked, "state", "parked")
	mw.gauge("held_max", "The --max-held setting.", h.Max)
	mw.gauge("held_oldest_seconds", "How long the oldest held connection has been held.", h.Oldest.Seconds())
	mw.counter("held_new", "Connections the master held from their start: accepted by itself, or given to it not ready by a child.", s.Stats.Held)
	mw.counter("handoffs", "Connections handed to a child by the master.", s.Stats.Handoffs)
	mw.counter("hold_timeouts", "Held connections closed after --hold-timeout.", s.Stats.HoldTimeouts)
	mw.counter("held_closed", "Held connections their client closed first.", s.Stats.HeldClosed)
	mw.counter("shed", "Held connections ended to make room for new ones (hold limit, out of fds).", s.Stats.Shed)
	mw.counter("parked", "Keep-alive connections children gave back to the master.", s.Stats.Parked)
	mw.gauge("offload_connections", "Responses the master finishes for children now (write completion).", h.Sending)
	mw.gauge("offload_bytes", "The data of those responses handed to the master (memfd memory, or file bytes).", h.SendingBytes)
	mw.gauge("offload_left_bytes", "Of it, the bytes not sent yet.", h.SendingLeft)
	mw.gauge("offload_oldest_seconds", "How long ago the oldest of those responses was handed to the master.", h.SendingOldest.Seconds())
	mw.counter("offloaded", "Responses children handed to the master to finish.", s.Stats.Finishing)
	mw.counter("offload_finished", "Of them, sent whole.", s.Stats.Finished)
	mw.counter("offload_failed", "Of them, ended early: the client gone, or the data short.", s.Stats.FinishFailed)
	mw.counter("send_timeouts", "Of them, closed after --send-timeout without progress, or at the graceful timeout.", s.Stats.SendTimeouts)
	mw.gauge("offload_refused", "Responses beyond --offload-total waiting for an idle child to write them.", h.Refused)
	mw.counter("offload_over_limit", "Responses the master did not take, beyond --offload-total: a child wrote them.", s.Stats.OverTotal)
	if h.Filter == "http" {
		writeBodyMetrics(mw, h)
	}
	mw.counter("proxy_headers", "PROXY protocol headers the master read (--proxy-protocol-from).", h.ProxyHeaders)
	mw.counter("proxy_failed", "Connections the master closed for a malformed PROXY header, or one not complete within --hold-timeout.", h.ProxyFailed)
}

// writeBodyMetrics writes the bodies the master holds (--hold-body).
func writeBodyMetrics(mw metricsWriter, h *prefork.HeldInfo) {
	mw.gauge("held_bodies", "Connections held for their request body (--hold-body).", h.Bodies)
	mw.gauge("held_body_bytes", "Bytes in the receive queues of the connections held for their body, heads included.", h.BodyBytes)
	mw.counter("bodies_at_bound", "Bodies larger than --hold-body, handed over once that much was in.", h.BodyBound)
	mw.counter("bodies_full", "Bodies handed over with their receive queue full before --hold-body (net.core.rmem_max).", h.BodyFull)
	mw.counter("bodies_stalled", "Bodies handed over after --hold-timeout without new bytes.", h.BodyStalled)
	mw.counter("continues", "100 Continue answers the master sent for held requests.", h.Continues)
	mw.counter("bodies_too_large", "413 answers the master sent for held requests whose Content-Length is over --max-request-body.", h.TooLarge)
}

// writeChildMetrics writes each live child's memory and CPU time, by slot,
// as the master read them at its last tick.
func writeChildMetrics(mw metricsWriter, slots []prefork.SlotInfo) {
	name := mw.family("child_memory_bytes", "gauge", "A child's resident memory (RSS), by slot.")
	for _, sl := range slots {
		mw.sample(name, sl.Memory, "slot", strconv.Itoa(sl.Slot))
	}
	name = mw.family("child_cpu_seconds_total", "counter", "CPU time used by the slot's current child (user + system); restarts at 0 with each new child.")
	for _, sl := range slots {
		mw.sample(name, sl.CPU, "slot", strconv.Itoa(sl.Slot))
	}
}
