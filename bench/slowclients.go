package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/actd/actd/internal/slowclient"
)

// The slow-clients experiment (issue 13): slowConns connections that send a
// request head one byte a second and silentConns that send nothing are held
// open against each server while goodConc good clients, each opening a
// connection per request, run for slowWindow. Before them, the good clients
// run alone for unloadedWindow, for the unloaded latency. Every server gets
// the fast pool (8 processes); actd's http accept filter holds the slow
// ones in its master, Apache prefork has Debian's mod_reqtimeout,
// gunicorn's sync workers have nothing in front, uWSGI has its --http
// router in front.
const (
	slowConns      = 2000
	silentConns    = 64
	goodConc       = 8
	slowWindow     = 10 * time.Second
	unloadedWindow = 3 * time.Second
	goodTimeout    = 5 * time.Second // a good request not answered by then failed
	slowDialers    = 64
)

// slowServers are the servers of the experiment, in table order.
var slowServers = []string{"actd-filter-http", "actd-dispatch", "apache-reqtimeout", "gunicorn", "uwsgi-router"}

// slowResult is one server's row.
type slowResult struct {
	server    string
	opened    int       // slow and silent connections the server (or its kernel queue) took
	unloaded  []float64 // good requests' latencies alone, ms
	loaded    []float64 // good requests' latencies beside the slow ones, ms
	failed    int       // good requests not answered within goodTimeout
	pool      string    // what the server's process tree or actd status showed halfway through
	heldBytes float64   // actd-filter-http: master RSS growth per connection held, bytes
	err       error
}

// runSlowClients measures every server in names, one after the other.
func runSlowClients(ctx context.Context, t *tools, names []string) []slowResult {
	var out []slowResult
	for _, name := range names {
		if ctx.Err() != nil {
			break
		}
		r := measureSlow(ctx, t, name)
		out = append(out, r)
		if r.err != nil {
			fmt.Fprintf(os.Stderr, "  %-18s FAILED: %v\n", name, firstLineOf(r.err.Error()))
			continue
		}
		fmt.Fprintf(os.Stderr, "  %-18s %d/%d good answered, p99 %.0f ms (unloaded %.0f ms); %s\n", name,
			len(r.loaded), len(r.loaded)+r.failed, quantile(r.loaded, 0.99), quantile(r.unloaded, 0.99), r.pool)
	}
	return out
}

// measureSlow runs the experiment against one server.
func measureSlow(ctx context.Context, t *tools, name string) slowResult {
	r := slowResult{server: name}
	s, err := newSetup(t, name, fastPool, 0)
	if err != nil {
		r.err = err
		return r
	}
	p, err := startServer(name, t, s)
	if err != nil {
		r.err = err
		return r
	}
	defer p.stop()
	r.unloaded, _ = goodClients(ctx, p, unloadedWindow)
	before := processMemory(p.pid())
	conns, _ := slowclient.Open(addr(p.port), slowConns, silentConns, slowDialers, 3*time.Second) // r.opened counts what connected
	defer conns.Close()
	r.opened = conns.Len()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { conns.Trickle(time.Second, stop) })
	time.Sleep(2 * time.Second) // the server takes what it will take
	if name == "actd-filter-http" && r.opened > 0 {
		r.heldBytes = float64(processMemory(p.pid()).rss-before.rss) / float64(r.opened)
	}
	pool := make(chan string, 1)
	mid := time.AfterFunc(slowWindow/2, func() { pool <- poolState(t, p, s) })
	r.loaded, r.failed = goodClients(ctx, p, slowWindow)
	r.pool = "not seen"
	if !mid.Stop() { // it ran, or runs
		r.pool = <-pool
	}
	close(stop)
	wg.Wait()
	return r
}

// goodClients runs goodConc clients against p for window, one request per
// connection, and returns the latencies of the answered requests (ms) and
// the number that failed or took longer than goodTimeout.
func goodClients(ctx context.Context, p *serverProc, window time.Duration) ([]float64, int) {
	var mu sync.Mutex
	var lat []float64
	failed := 0
	end := time.Now().Add(window)
	var wg sync.WaitGroup
	for range goodConc {
		wg.Go(func() {
			for n := 0; n < 100000 && time.Now().Before(end) && ctx.Err() == nil; n++ {
				start := time.Now()
				err := goodRequest(addr(p.port), p.path)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					lat = append(lat, float64(time.Since(start).Microseconds())/1000)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lat, failed
}

// goodRequest sends one complete request on a new connection and reads
// the whole answer, within goodTimeout.
func goodRequest(address, path string) error {
	c, err := net.DialTimeout("tcp", address, goodTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(goodTimeout))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	status, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.Contains(status, " 200 ") {
		return fmt.Errorf("status %q", strings.TrimSpace(status))
	}
	_, err = io.Copy(io.Discard, r)
	return err
}

// poolState describes the server's pool now: actd's STATUS= line from its
// control socket, or the number of processes in the tree.
func poolState(t *tools, p *serverProc, s setup) string {
	if strings.HasPrefix(p.name, "actd-") && t.actd != "" {
		out, err := exec.Command(t.actd, "status", "--control-socket", controlSocket(s)).Output()
		for line := range strings.SplitSeq(string(out), "\n") {
			if pool, ok := strings.CutPrefix(line, "pool: "); ok && err == nil {
				return pool
			}
		}
	}
	return strconv.Itoa(len(tree(p.pid()))) + " processes"
}

// quantile returns the q quantile of xs (nearest rank), 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// apacheReqtimeout is what Debian's reqtimeout.conf (enabled by default)
// adds to Apache: a request head must come within 20 s, extended by a
// second per 500 bytes up to 40 s; the body likewise within 20 s.
const apacheReqtimeout = `LoadModule reqtimeout_module /usr/lib/apache2/modules/mod_reqtimeout.so
RequestReadTimeout header=20-40,minrate=500
RequestReadTimeout body=10,minrate=500
`

// apacheReqtimeoutCommand is apacheCommand with Debian's mod_reqtimeout.
func apacheReqtimeoutCommand(s setup) (*exec.Cmd, string, error) {
	cmd, path, err := apacheCommand(s)
	if err != nil {
		return nil, "", err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "httpd.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	_, err = f.WriteString(apacheReqtimeout)
	return cmd, path, err
}

// uwsgiRouterCommand runs Debian's uWSGI with the pool's fixed number of
// processes behind its --http router (the router holds client connections
// and speaks the uwsgi protocol to the workers), serving gunicorn's app.
func uwsgiRouterCommand(s setup) (*exec.Cmd, error) {
	if err := os.WriteFile(filepath.Join(s.dir, "benchapp.py"), []byte(gunicornApp), 0o644); err != nil {
		return nil, fmt.Errorf("write uwsgi app: %w", err)
	}
	return exec.Command("/usr/bin/uwsgi-core", "--plugin", "python3,http",
		"--http", addr(s.port), "--master", "--processes", strconv.Itoa(s.pool.fixed),
		"--chdir", s.dir, "--wsgi-file", filepath.Join(s.dir, "benchapp.py"), "--callable", "app",
		"--disable-logging", "--die-on-term", "--http-timeout", "60"), nil
}
