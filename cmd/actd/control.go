package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/actd/actd/prefork"
)

// statusDoc is what the control socket answers, as JSON: the pool snapshot
// and who the master is.
type statusDoc struct {
	Version  string           `json:"version"`
	PID      int              `json:"pid"`
	Unit     string           `json:"unit,omitempty"`
	Rate     float64          `json:"rate"`           // connections/s since the previous status line
	Note     string           `json:"note,omitempty"` // e.g. why the last reload failed
	Snapshot prefork.Snapshot `json:"pool"`
}

// controlPath returns where the control socket lives: --control-socket, else
// $RUNTIME_DIRECTORY/control.sock (RuntimeDirectory= in the unit), else none.
func controlPath(flag string) string {
	if flag != "" {
		return flag
	}
	if dir := os.Getenv("RUNTIME_DIRECTORY"); dir != "" {
		return filepath.Join(filepath.SplitList(dir)[0], "control.sock")
	}
	return ""
}

// serveControl answers every connection on the unix socket path with one
// statusDoc, until ctx is done.
func serveControl(ctx context.Context, path string, m *master) error {
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s: another actd answers there", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale control socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	context.AfterFunc(ctx, func() { ln.Close() })
	unit := ownUnit()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				time.Sleep(100 * time.Millisecond) // EMFILE and friends: do not spin
				continue
			}
			go answerControl(c, m, unit)
		}
	}()
	return nil
}

func answerControl(c net.Conn, m *master, unit string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	doc, err := m.statusDoc(unit)
	if err != nil {
		fmt.Fprintf(c, "{\"error\": %q}\n", err.Error())
		return
	}
	json.NewEncoder(c).Encode(doc)
}

func (m *master) statusDoc(unit string) (statusDoc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	snap, err := m.pool.Snapshot(ctx)
	if err != nil {
		return statusDoc{}, fmt.Errorf("master loop: %w", err)
	}
	m.report.mu.Lock()
	r, note := rate(snap, m.report.prev), m.report.note
	m.report.mu.Unlock()
	return statusDoc{Version: version, PID: os.Getpid(), Unit: unit, Rate: r, Note: note, Snapshot: snap}, nil
}

// ownUnit returns the systemd unit this process runs in, from the last
// element of its cgroup path, or "" outside a service.
func ownUnit() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if base := filepath.Base(line); filepath.Ext(base) == ".service" {
			return base
		}
	}
	return ""
}
