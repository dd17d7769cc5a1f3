package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The WSGI servers (issue 14): the hello application of bench/gunicorn.go
// (gunicornApp) and a small Flask application, served by actd with the
// Python adapter (python/actd) in both accept modes, by gunicorn's sync
// workers (the hello one is the suite's "gunicorn") and by uWSGI, with the
// same number of processes.
var wsgiServers = []string{
	"wsgi-actd-dispatch", "wsgi-actd-exclusive", "wsgi-actd-exclusive-data", "wsgi-actd-filter-http", "uwsgi",
	"flask-actd-dispatch", "flask-actd-exclusive", "flask-gunicorn", "flask-uwsgi",
}

// flaskApp is the Flask application: the hello body, after BENCH_DELAY.
const flaskApp = `import os, time

from flask import Flask

DELAY = float(os.environ.get("BENCH_DELAY", "0"))
app = Flask(__name__)


@app.route("/")
def hello():
    if DELAY:
        time.sleep(DELAY)
    return "slot=0 pid=%d\n" % os.getpid(), 200, {"Content-Type": "text/plain"}
`

var wsgiHow = map[string]string{
	"wsgi-actd-dispatch":       "`actd --accept dispatch -- python3 -m actd.wsgi benchapp:app` (the hello WSGI application of `gunicorn`)",
	"wsgi-actd-exclusive":      "`actd --accept exclusive -- python3 -m actd.wsgi benchapp:app`",
	"wsgi-actd-exclusive-data": "`actd --accept exclusive --accept-filter data -- python3 -m actd.wsgi benchapp:app`: the listener defers each connection until its request is in (TCP_DEFER_ACCEPT), as docs/python.md recommends",
	"wsgi-actd-filter-http":    "`actd --accept dispatch --accept-filter http -- python3 -m actd.wsgi benchapp:app`: the default pool (packaging/etc/actd.conf); an adapter that announces `screen` accepts by itself, one that does not gets every connection from the master",
	"uwsgi":                    "uWSGI (Debian uwsgi-core, python3 plugin), `--master --processes N --http-socket`, the hello WSGI application; one request per connection (keep-alive reconnects); the application is loaded in the master before fork",
	"flask-actd-dispatch":      "`actd --accept dispatch -- python3 -m actd.wsgi benchflask:app`, a one-route Flask application (Debian python3-flask)",
	"flask-actd-exclusive":     "`actd --accept exclusive -- python3 -m actd.wsgi benchflask:app`",
	"flask-gunicorn":           "gunicorn sync workers, the Flask application",
	"flask-uwsgi":              "uWSGI as `uwsgi`, the Flask application",
}

func init() {
	allServers = append(allServers, wsgiServers...)
	for name, how := range wsgiHow {
		serverHow[name] = how
	}
	peers = append(peers, peer{"uwsgi-core", "/usr/bin/uwsgi-core"},
		peer{"uwsgi-plugin-python3", "/usr/lib/uwsgi/plugins/python3_plugin.so"},
		peer{"python3-flask", "/usr/lib/python3/dist-packages/flask/__init__.py"})
}

// wsgiCommand returns the command for name, one of wsgiServers. It returns
// an error if the server cannot run or name is not one of them.
func wsgiCommand(name string, t *tools, s setup) (*exec.Cmd, error) {
	app := "benchapp"
	if len(name) > 6 && name[:6] == "flask-" {
		app = "benchflask"
	}
	if err := writeApps(s.dir); err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	switch name {
	case "wsgi-actd-dispatch", "flask-actd-dispatch":
		return wsgiActd(t, "dispatch", app, s)
	case "wsgi-actd-exclusive", "flask-actd-exclusive":
		return wsgiActd(t, "exclusive", app, s)
	case "wsgi-actd-exclusive-data":
		return wsgiActd(t, "exclusive", app, s, "--accept-filter", "data")
	case "wsgi-actd-filter-http":
		return wsgiActd(t, "dispatch", app, s, "--accept-filter", "http")
	case "flask-gunicorn":
		var err error
		cmd, err = gunicornCommand(s)
		if err == nil {
			cmd.Args[len(cmd.Args)-1] = app + ":app"
		}
		return cmd, err
	case "uwsgi", "flask-uwsgi":
		cmd = exec.Command("/usr/bin/uwsgi-core", "--plugin", "python3",
			"--http-socket", addr(s.port), "--master", "--processes", strconv.Itoa(s.pool.fixed),
			"--chdir", s.dir, "--module", app+":app", "--need-app", "--die-on-term",
			"--disable-logging", "--env", "BENCH_DELAY="+delaySeconds(s))
		return cmd, nil
	}
	return nil, fmt.Errorf("unknown server %q", name)
}

// wsgiActd runs actd with the built pool limits, further actd flags, and the adapter from this
// checkout (PYTHONPATH=python) under Debian's python3.
func wsgiActd(t *tools, mode, app string, s setup, flags ...string) (*exec.Cmd, error) {
	if t.actd == "" {
		return nil, fmt.Errorf("actd not built: %v", t.actdErr)
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	// No --handler-delay: the application sleeps, not a built-in handler.
	// A generous --start-timeout: eight children importing Flask at once on
	// a busy 2-core machine may take longer than the default 10 s.
	args := append(append(withoutFlag(actdArgs(mode, s), "--handler-delay"), flags...), "--start-timeout", "60s",
		"--", "/usr/bin/python3", "-m", "actd.wsgi", "--chdir", s.dir, app+":app")
	cmd := exec.Command(t.actd, args...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "python"),
		"PYTHONDONTWRITEBYTECODE=1", "BENCH_DELAY="+delaySeconds(s))
	return cmd, nil
}

// writeApps writes the hello and Flask applications into dir.
func writeApps(dir string) error {
	for file, text := range map[string]string{"benchapp.py": gunicornApp, "benchflask.py": flaskApp} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
	}
	return nil
}

// withoutFlag returns args without flag and the value after it.
func withoutFlag(args []string, flag string) []string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return args
	}
	return append(slices.Clone(args[:i]), args[i+2:]...)
}

func delaySeconds(s setup) string { return strconv.FormatFloat(s.delay.Seconds(), 'f', -1, 64) }

// After a Python server answers its first request, its other workers may
// still be importing the application (each actd child and each gunicorn
// worker imports it after fork): measuring then would charge their start
// to whichever server is measured first. settle waits until the tree is
// quiet: less than settleQuiet of CPU in a settleWindow, at most settleBound.
const (
	settleWindow = 500 * time.Millisecond
	settleQuiet  = 50 * time.Millisecond
	settleBound  = 60 * time.Second
)

// settle waits for server name's process tree under pid to go quiet, if it
// is a Python server; it returns at once for the others.
func settle(name string, pid int) {
	if !slices.Contains(wsgiServers, name) && name != "gunicorn" && !isIssue21Python(name) && !isIssue24Python(name) {
		return
	}
	deadline := time.Now().Add(settleBound)
	last := treeCPU(pid)
	for time.Now().Before(deadline) {
		time.Sleep(settleWindow)
		now := treeCPU(pid)
		if now-last < settleQuiet {
			return
		}
		last = now
	}
}

// treeCPU returns the CPU time of the live processes in pid's tree.
func treeCPU(pid int) time.Duration {
	var total time.Duration
	for _, p := range tree(pid) {
		total += readSched(p.pid).cpu
	}
	return total
}

// wsgiPeers pairs each actd WSGI server with the gunicorn and uWSGI
// servers that run the same application.
var wsgiPeers = []struct{ server, gunicorn, uwsgi string }{
	{"wsgi-actd-dispatch", "gunicorn", "uwsgi"},
	{"wsgi-actd-exclusive", "gunicorn", "uwsgi"},
	{"wsgi-actd-exclusive-data", "gunicorn", "uwsgi"},
	{"wsgi-actd-filter-http", "gunicorn", "uwsgi"},
	{"flask-actd-dispatch", "flask-gunicorn", "flask-uwsgi"},
	{"flask-actd-exclusive", "flask-gunicorn", "flask-uwsgi"},
}

// writeWSGITargets writes issue 14's targets (the hello application at
// close-8: ≥ 1.3× gunicorn sync, ≥ 1.0× uWSGI) and, for every load, each
// actd WSGI server's median requests/s against its peers' in the same run.
// It writes nothing if no WSGI server was measured.
func (r report) writeWSGITargets(b *strings.Builder) {
	var rows []string
	for _, name := range r.opts.loads {
		for _, p := range wsgiPeers {
			got := r.medianRate(p.server, name)
			if got == 0 {
				continue
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %.0f | %s | %s |", name, p.server, got,
				times(got, r.medianRate(p.gunicorn, name)), times(got, r.medianRate(p.uwsgi, name))))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n| target (issue 14) | measured | met |\n|---|---|---|\n")
	for _, server := range []string{"wsgi-actd-dispatch", "wsgi-actd-exclusive", "wsgi-actd-exclusive-data"} {
		for _, peer := range []struct {
			name string
			want float64
		}{{"gunicorn", 1.3}, {"uwsgi", 1.0}} {
			got, base := r.medianRate(server, "close-8"), r.medianRate(peer.name, "close-8")
			target := fmt.Sprintf("%s ≥ %.1f× %s, close-8", server, peer.want, peer.name)
			if got == 0 || base == 0 {
				fmt.Fprintf(b, "| %s | not measured | – |\n", target)
				continue
			}
			fmt.Fprintf(b, "| %s | %.2f× (%.0f vs %.0f req/s) | %s |\n", target, got/base, got, base, yesNo(got/base >= peer.want))
		}
	}
	b.WriteString("\n| load | server | requests/s | × gunicorn | × uWSGI |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

// times renders got/base as a ratio, or "–" without a base.
func times(got, base float64) string {
	if base == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", got/base)
}
