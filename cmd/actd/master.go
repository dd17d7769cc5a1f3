package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/actd/actd/activation"
	"github.com/actd/actd/config"
	"github.com/actd/actd/notify"
	"github.com/actd/actd/prefork"
	"github.com/actd/actd/slogjournal"
)

// master is a running `actd` pool and what it tells systemd.
type master struct {
	args     []string // the command line, re-read on reload
	cfg      *config.Config
	log      *slog.Logger
	pool     *prefork.Pool
	notifier *notify.Notifier
	report   *reporter
}

func runMaster(args []string) int {
	cfg, err := config.Parse(args)
	if err != nil {
		return configExit(err)
	}
	log, err := slogjournal.New(os.Stderr, cfg.LogFormat, slog.LevelInfo)
	if err != nil {
		return configExit(&config.Error{Key: "log-format", Err: err})
	}
	m := &master{args: args, cfg: cfg, log: log, notifier: &notify.Notifier{}}
	if code, err := m.start(); err != nil {
		m.fail(err)
		return code
	}
	return m.serve()
}

// configExit reports a bad command line or setting and returns its status.
func configExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		usage(os.Stdout)
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "actd:", err)
	var ue *config.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(os.Stderr, "usage: actd [flags] [-- COMMAND [ARGS...]]; actd --help lists the flags and subcommands")
		return exitUsage
	}
	(&notify.Notifier{}).Errno(int(syscall.EINVAL), "actd: "+err.Error())
	return exitConfig
}

// fail tells the operator, systemd and the log why actd cannot run: an
// "actd: …" line on stderr like every other fatal error, and a structured
// entry too when the log is the journal (stderr then reaches the journal
// only as plain text).
func (m *master) fail(err error) {
	fmt.Fprintln(os.Stderr, "actd:", err)
	if _, ok := m.log.Handler().(*slogjournal.Handler); ok {
		m.log.Error("cannot start", "err", err)
	}
	m.notifier.Errno(int(errnoOf(err)), "actd: "+err.Error())
}

func errnoOf(err error) syscall.Errno {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EINVAL
}

// start takes the sockets and builds the pool. It returns the exit status
// to use if it fails.
func (m *master) start() (int, error) {
	socks, err := activation.Sockets(m.cfg.Listen)
	if errors.Is(err, activation.ErrNoSockets) {
		return exitConfig, fmt.Errorf("listen: no socket from systemd (LISTEN_FDS) and no --listen address")
	}
	if err != nil {
		return exitOSErr, err
	}
	ls := make([]prefork.Listener, len(socks))
	for i, s := range socks {
		ls[i] = prefork.Listener{Name: s.Name, FD: s.FD}
	}
	m.pool, err = prefork.New(poolConfig(m.cfg), ls, m.log)
	if err != nil {
		activation.Close(socks)
		return exitConfig, err
	}
	return exitOK, nil
}

// poolConfig is cfg's pool settings with the child command line.
func poolConfig(cfg *config.Config) prefork.Config {
	pc := cfg.Pool
	pc.Program = prefork.Program{Path: "/proc/self/exe", Args: childArgs(cfg.HandlerDelay, cfg.Exec, cfg.Worker)}
	return pc
}

// serve runs the pool until SIGTERM or SIGINT, reloading on SIGHUP.
func (m *master) serve() int {
	ctx, stopPool := context.WithCancel(context.Background())
	defer stopPool()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	runErr := make(chan error, 1)
	go func() { runErr <- m.pool.Run(ctx) }()
	side, stopSide := context.WithCancel(context.Background())
	defer stopSide()
	m.startSideServices(side)
	go m.announceReady()
	for {
		select {
		case err := <-runErr:
			stopSide()
			return m.exit(err)
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				m.reload()
				continue
			}
			m.log.Info("stopping", "event", "stop", "signal", sig.String())
			m.notifier.Stopping()
			stopPool()
			go m.extendWhileDraining()
		}
	}
}

func (m *master) announceReady() {
	select {
	case <-m.pool.Ready():
	case <-m.pool.Done():
		return
	}
	m.report.refresh()
	m.notifier.Ready()
	m.log.Info("ready", "event", "ready", "mode", m.cfg.Pool.Mode.String())
}

// extendWhileDraining asks systemd for more stop time while busy children
// finish, so TimeoutStopSec= does not cut a graceful drain short.
func (m *master) extendWhileDraining() {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		m.notifier.ExtendTimeout(10 * time.Second)
		select {
		case <-t.C:
		case <-m.pool.Done():
			return
		}
	}
}

func (m *master) exit(err error) int {
	m.report.refresh()
	m.report.flush()
	if err != nil {
		m.fail(err)
		return exitOSErr
	}
	m.log.Info("stopped", "event", "stopped")
	return exitOK
}

// reload re-reads the configuration and starts a new generation; READY=1
// follows when the generation is up, without holding up the signal loop (a
// SIGTERM during a slow reload stops at once). A bad configuration leaves the
// running pool as it is and says why.
func (m *master) reload() {
	m.notifier.Reloading()
	cfg, err := config.Parse(m.args)
	var ready <-chan struct{}
	if err == nil {
		ready, err = m.pool.Reload(poolConfig(cfg))
	}
	if err != nil {
		m.log.Error("reload failed, keeping the running pool", "event", "reload", "err", err)
		m.report.setNote("reload failed: " + err.Error())
		m.notifier.Ready()
		return
	}
	m.noteRestartOnly(cfg)
	m.cfg = cfg
	go func() {
		select {
		case <-ready:
			m.log.Info("reloaded", "event", "reload")
		case <-m.pool.Done():
		}
		m.report.refresh()
		m.notifier.Ready()
	}()
}

// noteRestartOnly logs and notes the settings of cfg that the reload
// cannot apply (keeping the running values in cfg), or clears the note if
// there are none.
func (m *master) noteRestartOnly(cfg *config.Config) {
	keys := config.KeepStartOnly(m.cfg, cfg)
	if len(keys) == 0 {
		m.report.setNote("")
		return
	}
	note := strings.Join(keys, ", ") + " changed: needs a restart, still running with the old value"
	m.log.Warn(note, "event", "reload", "keys", keys)
	m.report.setNote(note)
}
