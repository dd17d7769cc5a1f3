package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/actd/actd/config"
	"github.com/actd/actd/prefork"
)

// pendingReload is a generation started by a reload, until it serves alone.
type pendingReload struct {
	gen     int             // the generation Reload started
	ready   <-chan struct{} // closed when it serves alone, was abandoned, or a later reload superseded it
	want    int             // its start-children
	timeout time.Duration   // its start-timeout
	kept    []string        // settings that need a restart, kept at their running values
}

// wait returns the channel to select on; nil (never ready) for no reload.
func (r pendingReload) wait() <-chan struct{} { return r.ready }

// reloadReply is the control socket's answer to "reload", as JSON.
type reloadReply struct {
	Generation int    `json:"generation,omitempty"`
	Children   int    `json:"children,omitempty"`  // of the new generation, up (said hello)
	Finishing  int    `json:"finishing,omitempty"` // older children finishing their last connection
	Error      string `json:"error,omitempty"`
	Key        string `json:"key,omitempty"`     // the setting at fault, for a bad configuration
	Stopped    bool   `json:"stopped,omitempty"` // the pool stopped: no generation serves
}

// startReload tells systemd RELOADING=1, re-reads the configuration and
// starts a new generation with it. When that fails it keeps the running
// pool, notes why in the status, sends READY=1 and returns the error: a
// *config.Error for a bad or unchangeable setting, or the pool's error
// (prefork.ErrStopped).
func (m *master) startReload() (pendingReload, error) {
	m.notifier.Reloading()
	r, err := m.newGeneration()
	if err != nil {
		m.log.Error("reload failed, keeping the running pool", "event", "reload", "err", err)
		m.report.setNote("reload failed: " + err.Error())
		m.notifier.Ready()
	}
	return r, err
}

func (m *master) newGeneration() (pendingReload, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cfg, err := config.Parse(m.args)
	var ce *config.Error
	if err != nil && !errors.As(err, &ce) {
		err = &config.Error{Key: "config", Err: err}
	}
	if err != nil {
		return pendingReload{}, err
	}
	if cfg.Pool.Mode != m.cfg.Pool.Mode {
		return pendingReload{}, &config.Error{Key: "accept", Err: fmt.Errorf("%v cannot change to %v without a restart", m.cfg.Pool.Mode, cfg.Pool.Mode)}
	}
	gen, ready, err := m.pool.Reload(poolConfig(cfg))
	var fe *prefork.FieldError
	if errors.As(err, &fe) {
		return pendingReload{}, &config.Error{Key: fe.Field, Err: err}
	}
	if err != nil {
		return pendingReload{}, err
	}
	kept := config.KeepStartOnly(m.cfg, cfg)
	m.cfg = cfg
	return pendingReload{gen: gen, ready: ready, want: cfg.Pool.StartChildren, timeout: cfg.Pool.StartTimeout, kept: kept}, nil
}

// finishReload checks the generation r once its wait is over (it serves
// alone, or failed), notes the outcome in the status and the log, and
// sends READY=1. It returns the generation's children up, the older
// children still finishing their last connection, and nil or why the
// generation failed (the old children keep serving then).
func (m *master) finishReload(r pendingReload) (int, int, error) {
	up, finishing, err := m.checkGeneration(r)
	if err != nil {
		m.log.Error("reload: the new generation did not start, old children keep serving", "event", "reload",
			"generation", r.gen, "err", err)
		m.report.setNote("reload failed: " + err.Error())
	} else {
		m.log.Info("reloaded", "event", "reload", "generation", r.gen, "children", up, "finishing", finishing)
		m.noteRestartOnly(r.kept)
	}
	m.notifier.Ready()
	return up, finishing, err
}

// checkGeneration counts r's children that said hello, and the older
// children still finishing their last connection. It returns an error when
// the pool abandoned r (abandonedError), when none of r's children said
// hello, when fewer than start-children did while the worker fails to
// start, when a later reload superseded r, or when the loop does not
// answer.
func (m *master) checkGeneration(r pendingReload) (up, finishing int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	snap, err := m.pool.Snapshot(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("master loop: %w", err)
	}
	if a := snap.Abandoned; a != nil && a.Generation == r.gen {
		return 0, 0, abandonedError(a)
	}
	if snap.Generation != r.gen {
		return 0, 0, fmt.Errorf("generation %d was superseded by generation %d", r.gen, snap.Generation)
	}
	for _, sl := range snap.Slots {
		switch {
		case sl.Generation != r.gen:
			finishing++
		case strings.Contains("IABR", sl.State):
			up++
		}
	}
	failing := ""
	if snap.Failures > 0 {
		failing = fmt.Sprintf("; worker failing (%s), %d in a row", snap.LastExit, snap.Failures)
	}
	switch {
	case up == 0:
		return 0, finishing, fmt.Errorf("no child of generation %d said hello within start-timeout %v%s", r.gen, r.timeout, failing)
	case up < r.want && snap.Failures > 0:
		return up, finishing, fmt.Errorf("%d of %d children of generation %d started%s", up, r.want, r.gen, failing)
	}
	return up, finishing, nil
}

// abandonedError is why the pool abandoned a reload's generation a: a
// *config.Error naming the key when the worker cannot do what a setting
// asks (fork for preload, take handed-over connections), or an error when
// none of its children started.
func abandonedError(a *prefork.Abandoned) error {
	err := fmt.Errorf("generation %d cannot serve, generation %d serves on: %s", a.Generation, a.Serving, a.Reason)
	if a.Key == "" {
		return err
	}
	return &config.Error{Key: a.Key, Err: err}
}

// reloadFor is a reload asked over the control socket: it starts a new
// generation and waits until it serves alone (prefork.Pool.Reload: every
// older child exited or is finishing its last connection) or was
// abandoned, ctx is done or the pool stops, and says how it went.
func (m *master) reloadFor(ctx context.Context) reloadReply {
	r, err := m.startReload()
	if err != nil {
		return failedReply(r.gen, err)
	}
	select {
	case <-r.ready: // also when superseded: finishReload tells
	case <-m.pool.Done():
		return reloadReply{Generation: r.gen, Error: "the pool stopped", Stopped: true}
	case <-ctx.Done():
		return reloadReply{Generation: r.gen, Error: "the master is stopping", Stopped: true}
	}
	up, finishing, err := m.finishReload(r)
	if err != nil {
		return failedReply(r.gen, err)
	}
	return reloadReply{Generation: r.gen, Children: up, Finishing: finishing}
}

func failedReply(gen int, err error) reloadReply {
	rep := reloadReply{Generation: gen, Error: err.Error()}
	var ce *config.Error
	if errors.As(err, &ce) {
		rep.Key = ce.Key
		if rep.Key == "" {
			rep.Key = "config"
		}
	}
	return rep
}
