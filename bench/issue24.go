package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Issue 24's comparison: the cost of the PROXY protocol (a v1 header from
// a trusted source on every connection) and of TLS terminated in the
// children, for actd's built-in handler and the WSGI hello application,
// beside gunicorn sync with --certfile/--keyfile and uWSGI with
// --https-socket on the same application, with the same process count.
// `go run ./bench -issue24` runs only this (issue24run.go) and rewrites
// only its section of docs/benchmarks.md (issue24report.go). The load
// client is the suite's own (issue24client.go): wrk sends no PROXY header
// and reuses TLS sessions.

// issue24Procs is every server's process (or worker) count: one per
// connection of the keep-alive load, which a TLS connection holds.
const issue24Procs = 8

// The servers, by what the client speaks to them.
var (
	// issue24Proxy run with --proxy-protocol-from 127.0.0.1/32; the
	// client sends a v1 header first. Their twins without it are in
	// issue24Plain.
	issue24Proxy = []string{"i24-go-proxy", "i24-wsgi-proxy"}
	// issue24Plain are the default pool without PROXY protocol or TLS,
	// the reference of both.
	issue24Plain = []string{"i24-go", "i24-wsgi"}
	// issue24TLS serve HTTPS, actd's first, then the peers.
	issue24TLS = []string{"i24-go-tls-exclusive", "i24-go-tls", "i24-wsgi-tls-exclusive", "i24-wsgi-tls", "i24-gunicorn-tls", "i24-uwsgi-tls"}
)

// issue24Servers is every server of the comparison, in start order.
var issue24Servers = slices.Concat(issue24Plain, issue24Proxy, issue24TLS)

// issue24Labels are the servers' names in the tables.
var issue24Labels = map[string]string{
	"i24-go": "actd built-in, default", "i24-go-proxy": "actd built-in, default, PROXY v1",
	"i24-wsgi": "actd WSGI, default", "i24-wsgi-proxy": "actd WSGI, default, PROXY v1",
	"i24-go-tls-exclusive": "actd built-in, exclusive", "i24-go-tls": "actd built-in, default",
	"i24-wsgi-tls-exclusive": "actd WSGI, exclusive", "i24-wsgi-tls": "actd WSGI, default",
	"i24-gunicorn-tls": "gunicorn sync", "i24-uwsgi-tls": "uWSGI",
}

// issue24How says how each server runs, for the section.
var issue24How = map[string]string{
	"i24-go":                 "`actd --accept dispatch --accept-filter http` (the shipped default pool), built-in handler",
	"i24-go-proxy":           "the same with `--proxy-protocol-from 127.0.0.1/32`",
	"i24-wsgi":               "`actd --accept dispatch --accept-filter http -- python3 -m actd.wsgi benchapp:app`",
	"i24-wsgi-proxy":         "the same with `--proxy-protocol-from 127.0.0.1/32`",
	"i24-go-tls-exclusive":   "`actd --accept exclusive --tls-cert C --tls-key K`, built-in handler",
	"i24-go-tls":             "`actd --accept dispatch --accept-filter http --tls-cert C --tls-key K`, built-in handler",
	"i24-wsgi-tls-exclusive": "`actd --accept exclusive --tls-cert C --tls-key K -- python3 -m actd.wsgi benchapp:app`",
	"i24-wsgi-tls":           "`actd --accept dispatch --accept-filter http --tls-cert C --tls-key K -- python3 -m actd.wsgi benchapp:app`",
	"i24-gunicorn-tls":       "`gunicorn --worker-class sync --workers 8 --certfile C --keyfile K benchapp:app` (Python's ssl, OpenSSL 3)",
	"i24-uwsgi-tls":          "`uwsgi --master --processes 8 --https-socket ADDR,C,K` (Debian uwsgi-core: OpenSSL 3), the same application",
}

// issue24Command returns the command for one of issue24Servers. It
// returns an error if the application cannot be written, actd did not
// build, or name is not one of them.
func issue24Command(name string, t *tools, s setup) (*exec.Cmd, error) {
	if err := writeApps(s.dir); err != nil {
		return nil, err
	}
	cert, key := issue24CertFiles(t)
	tlsFlags := []string{"--tls-cert", cert, "--tls-key", key}
	filter := []string{"--accept-filter", "http"}
	proxy := []string{"--accept-filter", "http", "--proxy-protocol-from", "127.0.0.1/32"}
	switch name {
	case "i24-go", "i24-go-proxy", "i24-go-tls", "i24-go-tls-exclusive":
		mode, flags := issue24Flags(name, filter, proxy, tlsFlags)
		cmd, err := actdCommand(t, mode, false, s)
		if cmd != nil {
			cmd.Args = append(cmd.Args, flags...)
		}
		return cmd, err
	case "i24-wsgi", "i24-wsgi-proxy", "i24-wsgi-tls", "i24-wsgi-tls-exclusive":
		mode, flags := issue24Flags(name, filter, proxy, tlsFlags)
		return wsgiActd(t, mode, "benchapp", s, flags...)
	case "i24-gunicorn-tls":
		cmd, err := gunicornCommand(s)
		if cmd != nil {
			app := cmd.Args[len(cmd.Args)-1]
			cmd.Args = append(append(cmd.Args[:len(cmd.Args)-1], "--certfile", cert, "--keyfile", key), app)
		}
		return cmd, err
	case "i24-uwsgi-tls":
		return exec.Command("/usr/bin/uwsgi-core", "--plugin", "python3",
			"--https-socket", addr(s.port)+","+cert+","+key, "--master", "--processes", strconv.Itoa(s.pool.fixed),
			"--chdir", s.dir, "--module", "benchapp:app", "--need-app", "--die-on-term", "--disable-logging"), nil
	}
	return nil, fmt.Errorf("unknown server %q", name)
}

// issue24Flags returns the accept mode and actd's extra flags for one of
// actd's issue24Servers: exclusive for the "-exclusive" ones, else the
// default pool; PROXY protocol for the "-proxy" ones, TLS for the "-tls"
// ones.
func issue24Flags(name string, filter, proxy, tlsFlags []string) (string, []string) {
	switch {
	case strings.HasSuffix(name, "-tls-exclusive"):
		return "exclusive", tlsFlags
	case strings.HasSuffix(name, "-tls"):
		return "dispatch", slices.Concat(filter, tlsFlags)
	case strings.HasSuffix(name, "-proxy"):
		return "dispatch", proxy
	}
	return "dispatch", filter
}

// issue24CertFiles are the paths of the certificate and key every TLS
// server of the run uses (written by writeIssue24Cert).
func issue24CertFiles(t *tools) (cert, key string) {
	return filepath.Join(t.dir, "i24-cert.pem"), filepath.Join(t.dir, "i24-key.pem")
}

// isIssue24Python reports whether name is one of issue24Servers that runs
// Python (settle waits for its workers to import the application).
func isIssue24Python(name string) bool {
	return slices.Contains(issue24Servers, name) && !strings.HasPrefix(name, "i24-go")
}

// issue24Speaks returns how the client talks to server name.
func issue24Speaks(name string) clientKind {
	switch {
	case slices.Contains(issue24Proxy, name):
		return speakProxy
	case slices.Contains(issue24TLS, name):
		return speakTLS
	}
	return speakPlain
}

// issue24Probe returns the readiness probe for one of issue24Servers (a
// request as its client sends it), or nil for any other server.
func issue24Probe(name string, t *tools) func(address, path string) error {
	if !slices.Contains(issue24Servers, name) {
		return nil
	}
	c := newIssue24Client(issue24Speaks(name), t)
	return func(address, _ string) error { return c.once(address) }
}

// checkIssue24Peers returns an error if uWSGI has no HTTPS (a build
// without SSL: `uwsgi --help` lists no --https-socket).
func checkIssue24Peers() error {
	out, err := exec.Command("/usr/bin/uwsgi-core", "--help").Output()
	if err != nil && len(out) == 0 {
		return fmt.Errorf("uwsgi-core --help: %w", err)
	}
	if !strings.Contains(string(out), "--https-socket") {
		return fmt.Errorf("uwsgi-core has no --https-socket (built without SSL)")
	}
	return nil
}
