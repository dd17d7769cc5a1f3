package main

import (
	"fmt"
	"strings"
	"time"
)

// serverHow describes how each server runs in the load tables.
var serverHow = map[string]string{
	"actd-dispatch":           "`actd --accept dispatch`, built-in HTTP handler; master orders the lowest idle slot to accept",
	"actd-exclusive":          "`actd --accept exclusive`, built-in HTTP handler; children accept via EPOLLEXCLUSIVE",
	"actd-filter-http":        "`actd --accept dispatch --accept-filter http`, the default pool: children that announce `screen` (the built-in handler does) accept by themselves and hand the master only connections whose head is not in yet",
	"actd-filter-http-master": "`actd --accept dispatch --accept-filter http -- env ACTD_PROTOCOL=3 actd child http`: the same built-in handler as a revision-3 worker (no `screen`), so the master accepts, holds each connection until its head is in, and passes it to the lowest idle child (the master-first path)",
	"baseline":                "`bench/baseline`: fixed pool, each child in a blocking accept(2) loop, plain read/write; no supervisor on the path",
	"baseline-netconn":        "`bench/baseline -netconn`: the baseline serving each connection through a Go net.Conn (netpoller), as a `worker.Serve` worker does",
	"actd-go-fd":              "`actd --accept exclusive -- baseline -worker fd`: the baseline's answers through `worker.ServeFD` (the blocking fd)",
	"actd-go-conn":            "`actd --accept exclusive -- baseline -worker conn`: the same through `worker.Serve` (a net.Conn)",
	"actd-go-http":            "`actd --accept exclusive -- baseline -worker http`: net/http's Server on `worker.Listener`",
	"apache-prefork":          "Apache httpd, mpm_prefork, static 17-byte file (slow load: mod_lua handler with `r.usleep`)",
	"gunicorn":                "gunicorn, sync workers (fixed pool); sync workers close every connection, so keep-alive reconnects",
	"socket-activate":         "`systemd-socket-activate --accept`: fork and exec of `bench/responder` (C) per connection, no process limit",

	// The PSGI servers (psgi.go).
	"actd-psgi-dispatch":  "`actd --accept dispatch -- plackup -s Actd -E deployment hello.psgi`: the Perl handler (perl/lib), a hello PSGI app",
	"actd-psgi-exclusive": "`actd --accept exclusive -- plackup -s Actd -E deployment hello.psgi`: the Perl handler, children accept via EPOLLEXCLUSIVE",
	"starman":             "Starman (Debian), `--workers N -E deployment hello.psgi` (fixed pool, keep-alive on, 1 s timeout), the same PSGI app",
}

// writeServers writes the table of servers and their pool settings.
func (r report) writeServers(b *strings.Builder) {
	b.WriteString("| server | how it runs |\n|---|---|\n")
	for _, s := range r.opts.servers {
		how := serverHow[s]
		if base, before := splitBuild(s); before {
			how = serverHow[base] + "; the actd built from `-actd-before`"
		}
		fmt.Fprintf(b, "| %s | %s |\n", s, how)
	}
	fast := fastPoolOf(r.opts.pool)
	fmt.Fprintf(b, "\nPools: actd `--start-children %d --min-spare %d --max-spare %d --max-children %d` and Apache `StartServers %[1]d MinSpareServers %[2]d MaxSpareServers %[3]d MaxRequestWorkers %[4]d`; baseline and gunicorn run a fixed %[5]d processes (a keep-alive load gets at least one per connection). For the slow load the cap is %[6]d (`--max-children %[6]d`, `MaxRequestWorkers %[6]d`, %[6]d fixed processes). socket-activate has no cap.\n\n",
		fast.start, fast.minSpare, fast.maxSpare, fast.max, fast.fixed, slowPool.max)
}

// writeLoads writes one table per load.
func (r report) writeLoads(b *strings.Builder) {
	b.WriteString("### Loads\n\n")
	r.writeServers(b)
	fmt.Fprintf(b, "Each cell: median (min–max) of %d runs. Latency as wrk measures it: from the request's first byte written, so the accept-queue wait is in and the handshake is not. Errors: wrk's connect, read, write, timeout and non-2xx counts per run. Memory: the largest sum over the server's process tree seen during a run (sampled every %v). Master CPU: CPU time of the server's main process during the run (from schedstat, summed over its threads) divided by the connections the kernel accepted in that time (TcpPassiveOpens), or by requests for the keep-alive load.\n\n",
		r.opts.runs, memorySampleEvery)
	for _, name := range r.opts.loads {
		l, _ := loadByName(name)
		fmt.Fprintf(b, "#### %s\n\n", l.title())
		per := "conn"
		if l.keepAlive {
			per = "request"
		}
		fmt.Fprintf(b, "| server | requests/s | p50 ms | p99 ms | errors | processes | tree RSS MB | tree PSS MB | master RSS MB | master CPU µs/%s |\n", per)
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range r.cells {
			if c.load.name == name {
				b.WriteString(c.row() + "\n")
			}
		}
		b.WriteString("\n")
	}
}

// row renders c as one table row.
func (c cell) row() string {
	if c.err != nil || len(c.runs) == 0 {
		return fmt.Sprintf("| %s | failed (see below) | | | | | | | | |", c.server)
	}
	col := func(f func(runMeasure) float64, verb string) string {
		xs := make([]float64, len(c.runs))
		for i, m := range c.runs {
			xs[i] = f(m)
		}
		return spread(xs, verb)
	}
	cols := []string{
		c.server,
		col(func(m runMeasure) float64 { return m.wrk.rate() }, "%.0f"),
		col(func(m runMeasure) float64 { return ms(m.wrk.p50.Seconds()) }, "%.2f"),
		col(func(m runMeasure) float64 { return ms(m.wrk.p99.Seconds()) }, "%.2f"),
		col(func(m runMeasure) float64 { return float64(m.wrk.errors) }, "%.0f"),
		col(func(m runMeasure) float64 { return float64(m.peakProcs) }, "%.0f"),
		col(func(m runMeasure) float64 { return mb(m.peakTree.rss) }, "%.1f"),
		col(func(m runMeasure) float64 { return mb(m.peakTree.pss) }, "%.1f"),
		col(func(m runMeasure) float64 { return mb(m.peakMaster.rss) }, "%.1f"),
		col(func(m runMeasure) float64 { return m.masterCPUPer(c.load) }, "%.1f"),
	}
	return "| " + strings.Join(cols, " | ") + " |"
}

// writeIdle writes the idle table.
func (r report) writeIdle(b *strings.Builder) {
	if len(r.idle) == 0 {
		return
	}
	fmt.Fprintf(b, "### Idle\n\nAll servers started at once with the pools above, left alone for %v, then measured for %v with nobody connecting. CPU and wake-ups (times any thread of the main process was put on a CPU, summed over its threads) come from `/proc/PID/task/*/schedstat`, to the microsecond; master threads are counted at the end of the window.\n\n", idleSettle, r.opts.idle)
	b.WriteString("| server | processes | master threads | master CPU | master wake-ups/s | tree CPU | master RSS MB | tree RSS MB | tree PSS MB |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range r.idle {
		if m.err != nil {
			fmt.Fprintf(b, "| %s | failed (see below) | | | | | | | |\n", m.server)
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %d | %v | %.1f | %v | %.1f | %.1f | %.1f |\n", m.server, m.procs, m.master.threads,
			m.master.cpu.Round(time.Microsecond), float64(m.master.runs)/m.window.Seconds(), m.treeCPU.Round(time.Microsecond),
			mb(m.mem.rss), mb(m.treeMem.rss), mb(m.treeMem.pss))
	}
	b.WriteString("\n")
}

// ms converts seconds to milliseconds.
func ms(seconds float64) float64 { return seconds * 1000 }

// mb converts bytes to MiB.
func mb(bytes uint64) float64 { return float64(bytes) / (1 << 20) }
