package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

// cell is one server under one load: its runs, or why it has none.
type cell struct {
	server string
	load   load
	runs   []runMeasure
	err    error // set when the server could not be measured
	stop   error // set when the server did not stop cleanly
}

// runMatrix measures every server under every load, one server at a time.
// It returns the cells in load-major order; failures are kept in the cells.
func runMatrix(ctx context.Context, o options, t *tools, w wrkRunner) []cell {
	var cells []cell
	for _, name := range o.loads {
		l, _ := loadByName(name)
		for _, srv := range o.servers {
			if ctx.Err() != nil {
				return cells
			}
			c := measureCell(ctx, o, t, w, srv, l)
			logCell(c)
			cells = append(cells, c)
		}
	}
	return cells
}

// measureCell starts srv for l, warms it up, measures o.runs runs and stops
// it. It returns the cell, with err set if the server failed.
func measureCell(ctx context.Context, o options, t *tools, w wrkRunner, srv string, l load) (c cell) {
	c = cell{server: srv, load: l}
	s, err := newSetup(t, srv, poolFor(l), l.delay)
	if err != nil {
		c.err = err
		return c
	}
	p, err := startServer(srv, t, s)
	if err != nil {
		c.err = err
		return c
	}
	defer func() { c.stop = p.stop() }()
	warmup := o.warmup
	if l.delay > 0 {
		warmup = o.slowWarmup
	}
	if _, err := w.run(ctx, p.url(), l, warmup); err != nil {
		c.err = fmt.Errorf("warm-up: %w", err)
		return c
	}
	for range o.runs {
		m, err := measureRun(ctx, w, p, l, o.duration)
		if err != nil {
			c.err = err
			return c
		}
		c.runs = append(c.runs, m)
	}
	return c
}

// newSetup makes a fresh directory for one start of srv and picks a free
// port. It returns an error if either fails.
func newSetup(t *tools, srv string, p pool, delay time.Duration) (setup, error) {
	dir, err := os.MkdirTemp(t.dir, srv+"-")
	if err != nil {
		return setup{}, err
	}
	// Apache's children run as www-data and read their files from here.
	if err := os.Chmod(dir, 0o755); err != nil {
		return setup{}, err
	}
	port, err := freePort()
	if err != nil {
		return setup{}, err
	}
	return setup{pool: p, delay: delay, port: port, dir: dir}, nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// logCell prints one line of progress for c.
func logCell(c cell) {
	if c.err != nil {
		fmt.Fprintf(os.Stderr, "  %-16s %-12s FAILED: %v\n", c.server, c.load.name, c.err)
		return
	}
	rates := make([]float64, len(c.runs))
	for i, r := range c.runs {
		rates[i] = r.wrk.rate()
	}
	fmt.Fprintf(os.Stderr, "  %-16s %-12s %s req/s\n", c.server, c.load.name, spread(rates, "%.0f"))
	if c.stop != nil {
		fmt.Fprintf(os.Stderr, "  %-16s stop: %v\n", c.server, c.stop)
	}
}
