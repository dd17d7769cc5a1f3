package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// gunicornApp is the WSGI application gunicorn serves: the same body shape
// as actd's built-in handler, after BENCH_DELAY seconds.
const gunicornApp = `import os, time

DELAY = float(os.environ.get("BENCH_DELAY", "0"))


def app(environ, start_response):
    if DELAY:
        time.sleep(DELAY)
    body = ("slot=0 pid=%d\n" % os.getpid()).encode()
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(body)))])
    return [body]
`

// gunicornCommand runs Debian's gunicorn with the pool's fixed number of
// sync workers. Sync workers close every connection after one request, so
// keep-alive clients reconnect.
func gunicornCommand(s setup) (*exec.Cmd, error) {
	if err := os.WriteFile(filepath.Join(s.dir, "benchapp.py"), []byte(gunicornApp), 0o644); err != nil {
		return nil, fmt.Errorf("write gunicorn app: %w", err)
	}
	cmd := exec.Command("/usr/bin/python3", "-m", "gunicorn",
		"--workers", strconv.Itoa(s.pool.fixed),
		"--worker-class", "sync",
		"--bind", addr(s.port),
		"--chdir", s.dir,
		"--log-level", "warning",
		"benchapp:app")
	cmd.Env = append(os.Environ(), "BENCH_DELAY="+strconv.FormatFloat(s.delay.Seconds(), 'f', -1, 64))
	return cmd, nil
}
