package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Markers around the part of docs/benchmarks.md that issue 24's
// comparison rewrites.
const (
	issue24Begin = "<!-- bench:issue24:begin: written by `go run ./bench -issue24`; edits up to bench:issue24:end are overwritten -->"
	issue24End   = "<!-- bench:issue24:end -->"
)

// Issue 24's targets.
const (
	proxyCostMax    = 0.05 // PROXY protocol's cost at close-8, at most
	tlsVsGunicorn   = 1.0  // actd's TLS handshakes/s over gunicorn's at close-8, at least
	issue24TLSPeer  = "i24-gunicorn-tls"
	issue24TLSUwsgi = "i24-uwsgi-tls"
)

// issue24Report is what one -issue24 run measured.
type issue24Report struct {
	cells    []issue24Cell
	timing   issue24Timing
	facts    []fact
	uwsgiTLS string // whether Debian's uWSGI has HTTPS
	cpuFrom  string // where the servers' CPU time was read (issue24CPUFrom)
	elapsed  time.Duration
	load     [2]string // /proc/loadavg at the start and at the end: the machine is shared
}

// write prints the section and, if out is set, puts it between its
// markers in out. It returns the write's error.
func (r issue24Report) write(out string) error {
	text := r.markdown()
	fmt.Print(text)
	if out == "" {
		return nil
	}
	if err := replaceSection(out, section{issue24Begin, issue24End, text}); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

// markdown renders the section, markers included: how it was run, the
// PROXY protocol's cost, TLS beside the peers, the targets, failures.
func (r issue24Report) markdown() string {
	var b strings.Builder
	b.WriteString(issue24Begin + "\n\n")
	facts := report{facts: r.facts}
	fmt.Fprintf(&b, "Command: `go run ./bench -issue24` (commit %s, %s, %s CPUs, shared with other work: load average %s at the start, %s at the end). %s The whole run took %s.\n\n",
		facts.factValue("commit"), facts.factValue("date"), facts.factValue("nproc"), r.load[0], r.load[1],
		r.timing.describe(), r.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "Every server runs %d processes (a TLS connection holds its child, so the keep-alive load needs one per connection) and the hello WSGI application of `gunicorn` or the built-in handler. The client is the suite's own (`bench/issue24client.go`, Go's crypto/tls; wrk sends no PROXY header and reuses TLS sessions): %d connections in a closed loop on 127.0.0.1. close-8: one request per connection (`Connection: close`), over TLS a full handshake each (no session resumption: tickets off, no cache), so requests/s are handshakes/s. keepalive-8: requests on kept connections, a new connection (and handshake) whenever the server closes one (gunicorn's sync workers and uWSGI close after every response). TLS 1.3 with X25519 (the client offers X25519 then P-256: OpenSSL 3.0 has no ML-KEM, which Go would prefer; uWSGI sets P-256 alone, so its handshakes take a HelloRetryRequest), an ECDSA P-256 certificate verified by the client. uWSGI in Debian 12 has TLS: %s.\n\n",
		issue24Procs, issue24Conns, r.uwsgiTLS)
	servers := mdTable{head: []string{"server", "how it runs"}}
	for _, s := range issue24Servers {
		label := issue24Labels[s]
		if issue24Speaks(s) == speakTLS {
			label += ", TLS"
		}
		servers.add(label, issue24How[s])
	}
	servers.write(&b)
	b.WriteString("#### PROXY protocol, close-8\n\n")
	r.proxyTable().write(&b)
	b.WriteString(r.proxyNotes())
	b.WriteString("#### TLS\n\n")
	r.tlsTable().write(&b)
	b.WriteString("Median (min–max) of the rounds; ratios of the medians. The plain rows are the same pools without TLS, for the cost of TLS itself (at close-8, the runs of the PROXY pairs).\n\n")
	r.targets().write(&b)
	r.writeFailures(&b)
	b.WriteString(issue24End + "\n")
	return b.String()
}

// proxyNotes explains the PROXY table and how its target is judged.
func (r issue24Report) proxyNotes() string {
	return "Median (min–max) of the rounds. Requests/s with / without: ratio of the medians. " +
		"Requests/s: each pool loaded alone (the runs back to back). " +
		"Server µs/request: each pair's two pools loaded at once, in the same time window, by a client each; the CPU time (user and system) of the whole server, master and children, during that run, over the requests it answered; " +
		"read before and after the run from " + r.cpuFrom + ". " +
		"µs/request with / without: the median of the rounds' paired ratios (each round's two pools measured in the same time window), and their range: contention moves CPU per request too, and the range shows how much. " +
		"The target below is judged by server CPU per request (CPU cost: that paired median − 1), not by requests/s: the PROXY protocol's cost is CPU, and on this shared machine one server's requests/s swing by ±20% between rounds. " +
		"Master µs: CPU time of actd's master per connection, median, in the runs alone; under the default pool's filter the master reads the header of a connection it holds, while a child that accepts a connection itself reads it there.\n\n"
}

// proxyTable is a row per worker kind: without and with a v1 header,
// requests/s and server CPU per request.
func (r issue24Report) proxyTable() mdTable {
	t := mdTable{head: []string{"worker", "requests/s without (alone)", "requests/s with a v1 header (alone)", "requests/s with / without",
		"server µs/request without (together)", "server µs/request with (together)", "µs/request with / without", "CPU cost", "master µs without / with"}}
	for i, plain := range issue24Plain {
		proxy := issue24Proxy[i]
		without, with := r.median(plain, "close-8", clientRun.rate), r.median(proxy, "close-8", clientRun.rate)
		cost := r.proxyCost(i)
		t.add(strings.TrimSuffix(issue24Labels[plain], ", default"), r.spread(plain, "close-8", clientRun.rate), r.spread(proxy, "close-8", clientRun.rate),
			ratioText(with, without), spread(cost.without, "%.1f"), spread(cost.with, "%.1f"), cost.ratioText(), cost.costText(),
			r.masterText(plain)+" / "+r.masterText(proxy))
	}
	return t
}

// proxyCost is the PROXY protocol's cost for worker kind i of
// issue24Plain, from the runs of its two pools loaded together.
func (r issue24Report) proxyCost(i int) proxyCost {
	var plain, proxy []issue24Run
	if c := r.cell(issue24Plain[i], "close-8"); c != nil {
		plain = c.together
	}
	if c := r.cell(issue24Proxy[i], "close-8"); c != nil {
		proxy = c.together
	}
	return newProxyCost(plain, proxy)
}

// tlsTable is a row per TLS server, then the plain references.
func (r issue24Report) tlsTable() mdTable {
	t := mdTable{head: []string{"server", "close-8 handshakes/s", "× gunicorn", "× uWSGI", "keepalive-8 requests/s", "× gunicorn", "× uWSGI", "keepalive-8 handshakes/s"}}
	for _, s := range issue24TLS {
		t.add(r.tlsRow(issue24Labels[s], s, true)...)
	}
	for _, s := range issue24Plain {
		t.add(r.tlsRow(issue24Labels[s]+", plain HTTP", s, false)...)
	}
	return t
}

// tlsRow is server's cells of the TLS table, with ratios to the peers
// when ratios is set.
func (r issue24Report) tlsRow(label, server string, ratios bool) []string {
	row := []string{label}
	for _, load := range []string{"close-8", "keepalive-8"} {
		row = append(row, r.spread(server, load, clientRun.rate))
		got := r.median(server, load, clientRun.rate)
		if !ratios {
			row = append(row, "–", "–")
			continue
		}
		row = append(row, ratioText(got, r.median(issue24TLSPeer, load, clientRun.rate)), ratioText(got, r.median(issue24TLSUwsgi, load, clientRun.rate)))
	}
	return append(row, r.spread(server, "keepalive-8", clientRun.connRate))
}

// targets is the issue's targets: the PROXY protocol under 5% at close-8
// for each worker kind, judged by server CPU per request, and each actd
// TLS server's handshakes/s at least gunicorn's.
func (r issue24Report) targets() mdTable {
	t := mdTable{head: []string{"target (issue 24)", "measured", "met"}}
	for i := range issue24Plain {
		t.add(r.proxyTarget(i)...)
	}
	base := r.median(issue24TLSPeer, "close-8", clientRun.rate)
	for _, s := range issue24TLS[:4] {
		got := r.median(s, "close-8", clientRun.rate)
		target := fmt.Sprintf("TLS handshakes/s at least gunicorn's, close-8, %s", issue24Labels[s])
		if got == 0 || base == 0 {
			t.add(target, "not measured", "–")
			continue
		}
		t.add(target, fmt.Sprintf("%.2f× (%.0f vs %.0f)", got/base, got, base), yesNo(got/base >= tlsVsGunicorn))
	}
	return t
}

// proxyTarget is the target row of worker kind i of issue24Plain: the
// CPU cost per request, with the medians it comes from and the
// requests/s ratio beside it.
func (r issue24Report) proxyTarget(i int) []string {
	plain := issue24Plain[i]
	target := fmt.Sprintf("PROXY protocol costs under %.0f%% of server CPU per request, close-8, %s", 100*proxyCostMax, issue24Labels[plain])
	cost := r.proxyCost(i)
	met, measured := cost.met()
	if !measured {
		return []string{target, "not measured", "–"}
	}
	with, without := r.median(issue24Proxy[i], "close-8", clientRun.rate), r.median(plain, "close-8", clientRun.rate)
	return []string{target, fmt.Sprintf("%s (paired median of %d rounds; %.1f vs %.1f µs); requests/s %s", cost.costText(),
		len(cost.pairs), summarize(cost.with).median, summarize(cost.without).median, ratioText(with, without)), yesNo(met)}
}

// writeFailures lists the cells that failed, and failed connections in
// measured runs, so nothing goes missing.
func (r issue24Report) writeFailures(b *strings.Builder) {
	var notes []string
	for _, c := range r.cells {
		if c.err != nil {
			notes = append(notes, fmt.Sprintf("- %s, %s: failed: %s", issue24Labels[c.server], c.load, firstLineOf(c.err.Error())))
			continue
		}
		failed, conns := 0, 0
		var first error
		for _, m := range c.runs {
			failed, conns = failed+m.failed, conns+m.conns
			if first == nil {
				first = m.firstErr
			}
		}
		if failed > 0 {
			notes = append(notes, fmt.Sprintf("- %s, %s: %d of %d connections failed (first: %v)", issue24Labels[c.server], c.load, failed, conns, first))
		}
	}
	if len(notes) == 0 {
		b.WriteString("No connection failed.\n\n")
		return
	}
	b.WriteString("Failures:\n\n" + strings.Join(notes, "\n") + "\n\n")
}

// cell returns server's cell under load, or nil.
func (r issue24Report) cell(server, load string) *issue24Cell {
	for i := range r.cells {
		if r.cells[i].server == server && r.cells[i].load == load {
			return &r.cells[i]
		}
	}
	return nil
}

// figures returns f of each of server's runs under load.
func (r issue24Report) figures(server, load string, f func(clientRun) float64) []float64 {
	c := r.cell(server, load)
	if c == nil {
		return nil
	}
	var xs []float64
	for _, m := range c.runs {
		xs = append(xs, f(m.clientRun))
	}
	return xs
}

// median is the median of f over server's runs under load, 0 if none.
func (r issue24Report) median(server, load string, f func(clientRun) float64) float64 {
	return summarize(r.figures(server, load, f)).median
}

// spread is f over server's runs under load as "median (min–max)".
func (r issue24Report) spread(server, load string, f func(clientRun) float64) string {
	return spread(r.figures(server, load, f), "%.0f")
}

// masterText is the median master CPU per connection of server at
// close-8, in µs, or "–".
func (r issue24Report) masterText(server string) string {
	c := r.cell(server, "close-8")
	if c == nil || len(c.runs) == 0 {
		return "–"
	}
	var xs []float64
	for _, m := range c.runs {
		if m.conns > 0 {
			xs = append(xs, float64(m.masterCPU.Microseconds())/float64(m.conns))
		}
	}
	return fmt.Sprintf("%.1f", summarize(xs).median)
}

// ratioText is got/base as a ratio, or "–" if either is missing.
func ratioText(got, base float64) string {
	if got == 0 || base == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", got/base)
}
