package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
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
	log      *slog.Logger
	pool     *prefork.Pool
	notifier *notify.Notifier
	report   *reporter
	snaps    *snapshots   // shared by the status and metrics readers
	started  time.Time    // for process_start_time_seconds
	control  net.Listener // the control socket, or nil
	metrics  net.Listener // --metrics-listen, or nil
	fdStore  *fdStore     // systemd's fd store for held connections, or nil (fdstore.go)
	stopPool context.CancelFunc

	mu  sync.Mutex // guards cfg; serialises starting reloads
	cfg *config.Config
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
	warnRoot(os.Stderr, os.Geteuid(), os.Getenv)
	// Catch the signals before binding anything: a SIGHUP or SIGTERM sent
	// as soon as the control socket answers waits for serve instead of
	// killing the master (the default action of both).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	m := &master{args: args, cfg: cfg, log: log, notifier: &notify.Notifier{}, started: time.Now()}
	if code, err := m.start(); err != nil {
		m.fail(err)
		return code
	}
	return m.exit(m.serve(sigs))
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

// start takes the sockets, builds the pool and binds the control socket and
// the metrics address. It returns the exit status to use if it fails: 78
// for no socket or a bad setting, 71 when the system refuses a socket (an
// address in use, a control socket directory that does not exist).
func (m *master) start() (int, error) {
	socks, stored, err := activation.SocketsWithStored(m.cfg.Listen, m.cfg.SocketMode)
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
		dropStored(stored)
		return exitConfig, err
	}
	m.fdStore = useFDStore(m.pool, stored, m.log)
	m.snaps = &snapshots{take: m.pool.Snapshot, every: snapshotEvery}
	m.report = newReporter(m.pool, notify.NewStatusCoalescer(m.notifier, notify.DefaultStatusPeriod, m.log))
	return m.listenSide()
}

// poolConfig is cfg's pool settings with the child command line.
func poolConfig(cfg *config.Config) prefork.Config {
	pc := cfg.Pool
	pc.Program = prefork.Program{Path: "/proc/self/exe", Args: childArgs(cfg.HandlerDelay, cfg.HandlerFiles, cfg.Exec, cfg.Worker)}
	return pc
}

// serve runs the pool and everything beside it in one group until SIGTERM
// or SIGINT (from sigs) has drained the pool, or a member fails. It returns the error of
// the member that ended the group, or nil.
func (m *master) serve(sigs chan os.Signal) error {
	var g group
	poolCtx, stopPool := context.WithCancel(context.Background())
	m.stopPool = stopPool
	g.add("pool", func() error { return m.pool.Run(poolCtx) }, func(err error) {
		if err != nil { // a member failed: drain and exit with its error
			m.log.Error("stopping", "event", "stop", "err", err)
			m.notifier.Stopping()
		}
		stopPool()
	})
	quit := make(chan struct{})
	g.add("signals", func() error { return m.handleSignals(sigs, quit) },
		func(error) { signal.Stop(sigs); close(quit) })
	m.addSideServices(&g)
	return g.run()
}

// handleSignals is the signal member: it announces READY=1 once the pool is
// ready, reloads on SIGHUP, and on SIGTERM or SIGINT stops the pool and asks
// systemd for more time while it drains. It returns nil when quit closes.
func (m *master) handleSignals(sigs <-chan os.Signal, quit <-chan struct{}) error {
	ready := m.pool.Ready()
	var extend <-chan time.Time
	var reload pendingReload
	for {
		select {
		case <-quit:
			return nil
		case <-ready:
			ready = nil
			m.announceReady()
		case <-reload.wait():
			m.finishReload(reload)
			reload = pendingReload{}
		case <-extend:
			m.notifier.ExtendTimeout(10 * time.Second)
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				reload, _ = m.startReload()
				continue
			}
			m.log.Info("stopping", "event", "stop", "signal", sig.String())
			m.notifier.Stopping()
			m.stopPool()
			m.notifier.ExtendTimeout(10 * time.Second)
			extend = time.Tick(5 * time.Second) // so TimeoutStopSec= does not cut a graceful drain short
		}
	}
}

func (m *master) announceReady() {
	select {
	case <-m.pool.Done():
		return
	default:
	}
	m.report.refresh()
	m.notifier.Ready()
	m.log.Info("ready", "event", "ready", "mode", m.config().Pool.Mode.String())
}

func (m *master) config() *config.Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// exit reports how the group ended and returns the exit status: 0 after a
// drain, 78 when the pool found its settings cannot work (a worker that
// cannot take handed-over connections under an accept filter), 71 when a
// member (the pool, a side service) failed otherwise.
func (m *master) exit(err error) int {
	m.report.refresh()
	m.report.flush()
	var fe *prefork.FieldError
	if errors.As(err, &fe) {
		m.fail(err)
		return exitConfig
	}
	if err != nil {
		m.fail(err)
		return exitOSErr
	}
	m.log.Info("stopped", "event", "stopped")
	return exitOK
}

// noteRestartOnly logs and notes the settings (keys, from
// config.KeepStartOnly) that a reload could not apply, or clears the note
// if there are none.
func (m *master) noteRestartOnly(keys []string) {
	if len(keys) == 0 {
		m.report.setNote("")
		return
	}
	note := strings.Join(keys, ", ") + " changed: needs a restart, still running with the old value"
	m.log.Warn(note, "event", "reload", "keys", keys)
	m.report.setNote(note)
}
