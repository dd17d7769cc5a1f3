package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"time"
)

// setup is what one server start is configured for.
type setup struct {
	pool  pool
	delay time.Duration // handler delay per request
	port  int           // TCP port on 127.0.0.1
	dir   string        // a fresh directory for this start's files
}

// command returns the command that starts server name for s, and the URL
// path to request from it. It returns an error if the server's program is
// unavailable or its files cannot be written.
func command(name string, t *tools, s setup) (*exec.Cmd, string, error) {
	base, before := splitBuild(name)
	if before && !slices.Contains(actdServers, base) {
		return nil, "", fmt.Errorf("unknown server %q", name)
	}
	switch base {
	case "actd-dispatch", "actd-exclusive":
		cmd, err := actdCommand(t, base[len("actd-"):], before, s)
		return cmd, "/", err
	case "actd-filter-http": // dispatch mode, the master holds connections until their head is in
		cmd, err := actdCommand(t, "dispatch", before, s)
		if cmd != nil {
			cmd.Args = append(cmd.Args, "--accept-filter", "http")
		}
		return cmd, "/", err
	case "actd-accesslog-file": // issue25.go
		cmd, err := accessLogCommand(t, s)
		return cmd, "/", err
	case "actd-filter-http-master":
		cmd, err := actdRevision3Command(t, s)
		return cmd, "/", err
	case "apache-reqtimeout":
		return apacheReqtimeoutCommand(s)
	case "uwsgi-router":
		cmd, err := uwsgiRouterCommand(s)
		return cmd, "/", err
	case "baseline":
		return baselineCommand(t, s), "/", nil
	case "baseline-netconn":
		return baselineCommand(t, s, "-netconn"), "/", nil
	case "actd-go-fd", "actd-go-conn", "actd-go-http":
		cmd, err := actdWorkerCommand(t, base[len("actd-go-"):], s)
		return cmd, "/", err
	case "apache-prefork":
		return apacheCommand(s)
	case "gunicorn":
		cmd, err := gunicornCommand(s)
		return cmd, "/", err
	case "socket-activate":
		cmd, err := socketActivateCommand(t, s)
		return cmd, "/", err
	case "actd-psgi-dispatch", "actd-psgi-exclusive", "starman":
		cmd, err := psgiCommand(base, t, s)
		return cmd, "/", err
	}
	if slices.Contains(issue24Servers, base) {
		cmd, err := issue24Command(base, t, s)
		return cmd, "/", err
	}
	if slices.Contains(issue21Servers, base) {
		return issue21Command(base, t, s)
	}
	if slices.Contains(wsgiServers, base) {
		cmd, err := wsgiCommand(base, t, s)
		return cmd, "/", err
	}
	return nil, "", fmt.Errorf("unknown server %q", name)
}

// baselineCommand runs bench/baseline with the pool's fixed size and any
// extra flags.
func baselineCommand(t *tools, s setup, extra ...string) *exec.Cmd {
	args := []string{"-listen", addr(s.port), "-children", strconv.Itoa(s.pool.fixed), "-delay", s.delay.String()}
	return exec.Command(t.baseline, append(args, extra...)...)
}

// socketActivateCommand runs systemd-socket-activate in inetd style: one
// bench/responder process per connection, with no limit on their number.
func socketActivateCommand(t *tools, s setup) (*exec.Cmd, error) {
	if t.responder == "" {
		return nil, fmt.Errorf("no responder: %v", t.responderErr)
	}
	return exec.Command("/usr/bin/systemd-socket-activate", "--accept",
		"-l", addr(s.port), t.responder, strconv.FormatInt(s.delay.Milliseconds(), 10)), nil
}

// actdCommand runs actd (the -actd-before build if before is set) with its
// built-in HTTP handler in accept mode mode and a control socket in s.dir.
// It returns an error if that actd did not build.
func actdCommand(t *tools, mode string, before bool, s setup) (*exec.Cmd, error) {
	bin, err := t.actd, t.actdErr
	if before {
		bin, err = t.actdBefore, t.actdBeforeErr
	}
	if bin == "" {
		return nil, fmt.Errorf("actd not built: %v", err)
	}
	return exec.Command(bin, actdArgs(mode, s)...), nil
}

// actdArgs returns actd's command line for mode and s.
func actdArgs(mode string, s setup) []string {
	return []string{
		"--listen", addr(s.port),
		"--accept", mode,
		"--start-children", strconv.Itoa(s.pool.start),
		"--min-spare", strconv.Itoa(s.pool.minSpare),
		"--max-spare", strconv.Itoa(s.pool.maxSpare),
		"--max-children", strconv.Itoa(s.pool.max),
		"--handler-delay", s.delay.String(),
		"--control-socket", controlSocket(s),
	}
}

// controlSocket is the path of actd's control socket for s.
func controlSocket(s setup) string { return s.dir + "/control.sock" }

// addr is the loopback listening address for port.
func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// actdWorkerCommand runs actd in exclusive mode with bench/baseline as its
// worker, serving through the Go worker library's path how (baseline
// -worker: fd, conn or http). It returns an error if actd did not build.
func actdWorkerCommand(t *tools, how string, s setup) (*exec.Cmd, error) {
	if t.actd == "" {
		return nil, fmt.Errorf("actd not built: %v", t.actdErr)
	}
	args := append(actdArgs("exclusive", s), "--", t.baseline, "-worker", how, "-delay", s.delay.String())
	return exec.Command(t.actd, args...), nil
}

// actdRevision3Command runs the default pool (dispatch, --accept-filter
// http) with the built-in handler played as a worker of protocol revision 3
// would: the worker command is actd's own hidden child subcommand run
// through env(1) with ACTD_PROTOCOL=3, so the library says hello without
// the screen capability and the master accepts, holds and hands over every
// connection (the master-first path) for the very same handler code. It
// returns an error if actd did not build.
func actdRevision3Command(t *tools, s setup) (*exec.Cmd, error) {
	if t.actd == "" {
		return nil, fmt.Errorf("actd not built: %v", t.actdErr)
	}
	args := append(withoutFlag(actdArgs("dispatch", s), "--handler-delay"), "--accept-filter", "http",
		"--", "/usr/bin/env", "ACTD_PROTOCOL=3", t.actd, "child", "http", s.delay.String())
	return exec.Command(t.actd, args...), nil
}
