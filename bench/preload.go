package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The preload comparison (issue 15, item 5): a Python application that
// makes 50 MB at import, in a pool of 32, served by actd with and without
// --preload, gunicorn with and without --preload, and uWSGI with its
// default (load in the master, fork) and with --lazy-apps (load in each
// worker). For each: the process tree's PSS once 32 workers run, and how
// long it took to get there. actd and uWSGI (cheaper mode) start 2 and grow
// to 32 under a burst of 32 clients whose requests take 200 ms; gunicorn
// has no scaler, so its figure is the start of its fixed 32 workers.

// preloadApp is the application every server runs.
const preloadApp = `import os, time

BALLAST = b"x" * (50 << 20)  # written at import: resident, and shared after a fork


def app(environ, start_response):
    time.sleep(0.2)
    body = ("pid=%d\n" % os.getpid()).encode()
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(body)))])
    return [body]
`

const (
	preloadPool    = 32
	preloadBound   = 120 * time.Second // a server that does not reach 32 workers by then fails its row
	preloadWorker  = 40 << 20          // a process this large (RSS) has the application loaded
	preloadClients = 32
)

// preloadRow is one server's result.
type preloadRow struct {
	name    string
	what    string // what the time measures
	took    time.Duration
	workers int
	tree    memory
	procs   int
	err     error
}

// runPreload measures every server of the comparison and prints the table.
func runPreload(ctx context.Context, t *tools, root, dir string) error {
	if t.actdErr != nil {
		return t.actdErr
	}
	if err := os.WriteFile(filepath.Join(dir, "preloadapp.py"), []byte(preloadApp), 0o644); err != nil {
		return err
	}
	var rows []preloadRow
	for _, srv := range []struct {
		name  string
		burst bool
		cmd   func(port int) *exec.Cmd
	}{
		{"actd", true, func(port int) *exec.Cmd { return preloadActd(t, root, dir, port, false) }},
		{"actd --preload", true, func(port int) *exec.Cmd { return preloadActd(t, root, dir, port, true) }},
		{"actd, scale-period 100ms", true, func(port int) *exec.Cmd {
			return preloadActd(t, root, dir, port, false, "--scale-period", "100ms")
		}},
		{"actd --preload, scale-period 100ms", true, func(port int) *exec.Cmd {
			return preloadActd(t, root, dir, port, true, "--scale-period", "100ms")
		}},
		{"gunicorn", false, func(port int) *exec.Cmd { return preloadGunicorn(dir, port, false) }},
		{"gunicorn --preload", false, func(port int) *exec.Cmd { return preloadGunicorn(dir, port, true) }},
		{"uwsgi --lazy-apps", true, func(port int) *exec.Cmd { return preloadUwsgi(dir, port, true) }},
		{"uwsgi (preload)", true, func(port int) *exec.Cmd { return preloadUwsgi(dir, port, false) }},
	} {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(os.Stderr, "preload: %s\n", srv.name)
		row := measurePreload(ctx, srv.name, srv.burst, srv.cmd, dir)
		if row.err != nil {
			fmt.Fprintf(os.Stderr, "preload: %s: %v\n", srv.name, row.err)
		}
		rows = append(rows, row)
	}
	fmt.Print(preloadTable(rows))
	return nil
}

// preloadActd runs actd with the Python adapter: 2 children, up to 32,
// and extra flags.
func preloadActd(t *tools, root, dir string, port int, preload bool, extra ...string) *exec.Cmd {
	args := []string{"--listen", addr(port), "--start-children", "2", "--min-children", "2",
		"--max-children", strconv.Itoa(preloadPool), "--max-spare", strconv.Itoa(preloadPool),
		"--start-timeout", "120s", "--control-socket", filepath.Join(dir, "preload.sock"), "--log-format", "text"}
	if preload {
		args = append(args, "--preload")
	}
	args = append(args, extra...)
	cmd := exec.Command(t.actd, append(args, "--", "/usr/bin/python3", "-m", "actd.wsgi", "preloadapp:app")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "python")+":"+dir)
	return cmd
}

// preloadGunicorn runs gunicorn with 32 sync workers.
func preloadGunicorn(dir string, port int, preload bool) *exec.Cmd {
	args := []string{"-m", "gunicorn", "--workers", strconv.Itoa(preloadPool), "--worker-class", "sync",
		"--bind", addr(port), "--chdir", dir, "--log-level", "warning", "--timeout", "120"}
	if preload {
		args = append(args, "--preload")
	}
	return exec.Command("/usr/bin/python3", append(args, "preloadapp:app")...)
}

// preloadUwsgi runs uWSGI's cheaper mode: 2 workers, up to 32, 30 more at
// once when all are busy.
func preloadUwsgi(dir string, port int, lazy bool) *exec.Cmd {
	args := []string{"--plugin", "python3", "--http-socket", addr(port), "--master", "--chdir", dir,
		"--module", "preloadapp:app", "--processes", strconv.Itoa(preloadPool), "--cheaper", "2",
		"--cheaper-initial", "2", "--cheaper-step", strconv.Itoa(preloadPool - 2), "--cheaper-overload", "1",
		"--disable-logging", "--die-on-term"}
	if lazy {
		args = append(args, "--lazy-apps")
	}
	return exec.Command("/usr/bin/uwsgi-core", args...) // Debian uwsgi-core, as the suite installs it
}

// measurePreload starts one server, waits for its first workers, and times
// its way to 32 workers (under a burst when the server scales).
func measurePreload(ctx context.Context, name string, burst bool, mk func(int) *exec.Cmd, dir string) preloadRow {
	row := preloadRow{name: name, what: "2 → 32 under a burst"}
	if !burst {
		row.what = "start of 32 fixed workers"
	}
	port, err := freePort()
	if err != nil {
		row.err = err
		return row
	}
	cmd := mk(port)
	log, err := os.Create(filepath.Join(dir, "preload-"+strconv.Itoa(port)+".log"))
	if err != nil {
		row.err = err
		return row
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		row.err = err
		return row
	}
	defer stopPreload(cmd)
	root := cmd.Process.Pid
	if burst {
		if err := waitWorkers(ctx, root, 2, started); err != nil {
			row.err = fmt.Errorf("first 2 workers: %w", err)
			return row
		}
		if err := waitAnswer(addr(port), started); err != nil {
			row.err = err
			return row
		}
		time.Sleep(time.Second) // settled: nothing left of the start
		stop := make(chan struct{})
		var wg sync.WaitGroup
		startBurst(&wg, stop, addr(port))
		started = time.Now()
		err = waitWorkers(ctx, root, preloadPool, started)
		row.took = time.Since(started)
		row.tree, row.procs = treeMemory(root)
		close(stop)
		wg.Wait()
	} else {
		err = waitWorkers(ctx, root, preloadPool, started)
		row.took = time.Since(started)
		row.tree, row.procs = treeMemory(root)
	}
	row.workers = countWorkers(root)
	row.err = err
	return row
}

// startBurst starts preloadClients clients that request addr in a loop
// until stop closes (each request bounded by a timeout).
func startBurst(wg *sync.WaitGroup, stop chan struct{}, address string) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range preloadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if resp, err := client.Get("http://" + address + "/"); err == nil {
					resp.Body.Close()
				} else {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
}

// waitAnswer waits until the server answers a request.
func waitAnswer(address string, started time.Time) error {
	for time.Since(started) < preloadBound {
		if err := getOnce(address, "/"); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no answer within %v", preloadBound)
}

// waitWorkers waits until root has n workers with the application loaded.
func waitWorkers(ctx context.Context, root, n int, started time.Time) error {
	for time.Since(started) < preloadBound && ctx.Err() == nil {
		if countWorkers(root) >= n {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%d workers, want %d within %v", countWorkers(root), n, preloadBound)
}

// countWorkers counts root's descendants that hold the application
// (resident memory above preloadWorker), less the one that only loads it:
// a uWSGI or gunicorn master is root, left out; actd's zygote is the one
// whose environment says so (its children's /proc environ is the zygote's
// too, as they never exec, so it is told apart as the oldest such process).
func countWorkers(root int) int {
	n := 0
	zygote := oldestZygote(root)
	for _, p := range tree(root) {
		if p.pid == root || p.pid == zygote {
			continue
		}
		if processMemory(p.pid).rss >= preloadWorker {
			n++
		}
	}
	return n
}

// oldestZygote returns the PID of root's child that was exec'd as a zygote
// (ACTD_ROLE=zygote, parent root, the earliest start), or 0.
func oldestZygote(root int) int {
	best, bestStart := 0, uint64(1<<63)
	for _, p := range tree(root) {
		if p.ppid != root || !isZygote(p.pid) {
			continue
		}
		if start := startTime(p.pid); start < bestStart {
			best, bestStart = p.pid, start
		}
	}
	return best
}

// startTime returns pid's start time in clock ticks after boot, field 22
// of /proc/PID/stat.
func startTime(pid int) uint64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 1 << 63
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 20 {
		return 1 << 63
	}
	v, _ := strconv.ParseUint(fields[19], 10, 64)
	return v
}

// isZygote reports whether pid runs with ACTD_ROLE=zygote.
func isZygote(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	return err == nil && containsEnv(b, "ACTD_ROLE=zygote")
}

func containsEnv(environ []byte, kv string) bool {
	start := 0
	for i, c := range environ {
		if c == 0 {
			if string(environ[start:i]) == kv {
				return true
			}
			start = i + 1
		}
	}
	return false
}

// stopPreload ends a server and its process group.
func stopPreload(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// preloadTable renders rows as markdown, with ratios to the first row of
// each pair.
func preloadTable(rows []preloadRow) string {
	s := "| server | time to 32 workers | measured | tree PSS | tree RSS | processes |\n|---|---|---|---|---|---|\n"
	for _, r := range rows {
		if r.err != nil {
			s += fmt.Sprintf("| %s | failed: %v | %s | | | |\n", r.name, r.err, r.what)
			continue
		}
		s += fmt.Sprintf("| %s | %.2f s | %s | %d MiB | %d MiB | %d |\n", r.name, r.took.Seconds(), r.what,
			r.tree.pss>>20, r.tree.rss>>20, r.procs)
	}
	js, _ := json.Marshal(preloadJSON(rows))
	return s + "\n" + string(js) + "\n"
}

// preloadJSON is the raw figures, for the record.
func preloadJSON(rows []preloadRow) []map[string]any {
	var out []map[string]any
	for _, r := range rows {
		out = append(out, map[string]any{"server": r.name, "seconds": r.took.Seconds(),
			"pss": r.tree.pss, "rss": r.tree.rss, "procs": r.procs, "workers": r.workers, "err": fmt.Sprint(r.err)})
	}
	return out
}
