package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/actd/actd/internal/slowclient"
)

// Issue 21's comparison: slow request bodies and slow readers against
// actd's default pool (the http filter holding bodies, the master
// finishing responses), actd without that holding, Apache's event MPM,
// gunicorn sync and uWSGI's --http router with --post-buffering and
// offload threads, each with 8 processes (Apache: 8 workers) running the
// same application: a WSGI echo and file application (issue21App) for the
// Python servers, mod_lua and static files for Apache. `go run ./bench
// -issue21` runs only this (issue21run.go) and rewrites only its section
// of docs/benchmarks.md (issue21report.go).

// issue21Servers are the servers of the comparison, in table order.
var issue21Servers = []string{"i21-actd", "i21-actd-nohold", "i21-apache-event", "i21-gunicorn", "i21-uwsgi"}

// issue21Labels are their names in the tables.
var issue21Labels = map[string]string{
	"i21-actd": "actd default", "i21-actd-nohold": "actd, no holding", "i21-apache-event": "Apache event",
	"i21-gunicorn": "gunicorn sync", "i21-uwsgi": "uWSGI router",
}

// issue21How says how each server runs, for the section.
var issue21How = map[string]string{
	"i21-actd":         "`actd --accept dispatch --accept-filter http -- python3 -m actd.wsgi bench21:app`: the shipped default (`--hold-body 1M`, `--offload-max 8M`)",
	"i21-actd-nohold":  "the same with `--hold-body 0 --offload-max 0`: the filter waits for the head only, children write every response themselves",
	"i21-apache-event": "Apache httpd, mpm_event (2 processes × 4 threads, `MaxRequestWorkers 8`, Debian's mod_reqtimeout), `/echo` in mod_lua, the responses as static files (its write completion takes those)",
	"i21-gunicorn":     "gunicorn, 8 sync workers, nothing in front",
	"i21-uwsgi":        "uWSGI, `--http` router in front of 8 processes, `--post-buffering 65536 --offload-threads 2`",
}

// issue21Procs is every server's process (or worker) count.
const issue21Procs = 8

// issue21Size is the size of the slow readers' response.
const issue21Size = 4 << 20

// issue21App is the Python servers' application: POST /echo answers its
// body, GET /bytes issue21Size bytes as one string, GET /file the same
// bytes from a file through wsgi.file_wrapper, anything else the hello
// line. Byte i of the response is i mod 256 (issue21Byte).
var issue21App = slowclient.App("4 << 20", "bytes(range(256)) * (SIZE // 256)")

// issue21Byte is byte i of a slow reader's response.
func issue21Byte(i int64) byte { return byte(i) }

// issue21Command returns the command for one of issue21Servers and the
// path good clients request. It returns an error if the app cannot be
// written, actd did not build, or name is not one of them.
func issue21Command(name string, t *tools, s setup) (*exec.Cmd, string, error) {
	if err := os.WriteFile(filepath.Join(s.dir, "bench21.py"), []byte(issue21App), 0o644); err != nil {
		return nil, "", fmt.Errorf("write bench21.py: %w", err)
	}
	switch name {
	case "i21-actd":
		cmd, err := wsgiActd(t, "dispatch", "bench21", s, "--accept-filter", "http")
		return cmd, "/", err
	case "i21-actd-nohold":
		cmd, err := wsgiActd(t, "dispatch", "bench21", s, "--accept-filter", "http", "--hold-body", "0", "--offload-max", "0")
		return cmd, "/", err
	case "i21-apache-event":
		return apacheEventCommand(s)
	case "i21-gunicorn":
		cmd, err := gunicornCommand(s)
		if err == nil {
			cmd.Args[len(cmd.Args)-1] = "bench21:app"
		}
		return cmd, "/", err
	case "i21-uwsgi":
		return exec.Command("/usr/bin/uwsgi-core", "--plugin", "python3,http",
			"--http", addr(s.port), "--master", "--processes", strconv.Itoa(s.pool.fixed),
			"--chdir", s.dir, "--module", "bench21:app", "--need-app", "--die-on-term", "--disable-logging",
			"--http-timeout", "60", "--post-buffering", "65536", "--offload-threads", "2",
			"--stats", uwsgiStats(s)), "/", nil
	}
	return nil, "", fmt.Errorf("unknown server %q", name)
}

// uwsgiStats is the path of uWSGI's stats socket for s.
func uwsgiStats(s setup) string { return filepath.Join(s.dir, "stats.sock") }

// isIssue21Python reports whether name is one of issue21Servers that
// runs Python (settle waits for its workers to import the app).
func isIssue21Python(name string) bool {
	return slices.Contains(issue21Servers, name) && name != "i21-apache-event"
}

// issue21Timing is how long each part of the comparison lasts.
type issue21Timing struct {
	unloaded time.Duration // good clients alone, for the unloaded latency
	ramp     time.Duration // slow clients alone, taking what they take
	window   time.Duration // good clients beside the slow ones
	body     int           // bytes of each slow body
}

// The timings of a full and a -quick run. A full run's slow bodies last
// the ramp and the window: 128 KiB at 8 KiB/s, 16 s (the issue's 256 KiB
// at that rate would take 32 s).
var (
	issue21Full  = issue21Timing{unloaded: 3 * time.Second, ramp: 2 * time.Second, window: 14 * time.Second, body: 128 << 10}
	issue21Quick = issue21Timing{unloaded: time.Second, ramp: time.Second, window: 3 * time.Second, body: 32 << 10}
)
