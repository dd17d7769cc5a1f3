package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/actd/actd/config"
	"github.com/actd/actd/prefork"
)

// Bounds of the control socket: no number of clients takes more than
// controlClients of the master's fds, and none holds one long.
const (
	controlClients = 16               // served at once; the rest wait in the backlog
	requestWait    = time.Second      // for the request line; none (an old client) means status
	answerWait     = 5 * time.Second  // to write an answer
	reloadWait     = 10 * time.Minute // the reload client's bound on a wedged master
)

// statusDoc is what the control socket answers, as JSON: the pool snapshot
// and who the master is.
type statusDoc struct {
	Version  string           `json:"version"`
	PID      int              `json:"pid"`
	Unit     string           `json:"unit,omitempty"`
	Rate     float64          `json:"rate"`           // connections/s over the last rateWindow
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

// listenControl binds the unix socket path, removing a stale socket there
// first. It returns a *config.Error when path exists and is no socket (a
// directory, a file: never removed), and another error when another actd
// answers there, a stale socket cannot be removed, or the bind fails (a
// directory that does not exist, no permission).
func listenControl(path string) (net.Listener, error) {
	if err := config.CheckControlSocket(path); err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s: another actd answers there", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control socket: remove stale socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return limitListener(ln, controlClients), nil
}

// serveControl answers each connection on the control socket with one
// request, until ctx is done; then it waits for the answers in flight. It
// returns nil: accept errors (EMFILE) are waited out.
func (m *master) serveControl(ctx context.Context) error {
	var answering sync.WaitGroup
	defer answering.Wait()
	context.AfterFunc(ctx, func() { m.control.Close() })
	unit := ownUnit()
	for {
		c, err := m.control.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			time.Sleep(100 * time.Millisecond) // EMFILE and friends: do not spin
			continue
		}
		answering.Go(func() { m.answerControl(ctx, c, unit) })
	}
}

// answerControl reads one request line, "status" (or nothing) or "reload",
// and writes its JSON answer.
func (m *master) answerControl(ctx context.Context, c net.Conn, unit string) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(requestWait))
	line, _ := bufio.NewReader(io.LimitReader(c, 64)).ReadString('\n')
	var answer any
	switch req := strings.TrimSpace(line); req {
	case "", "status":
		doc, err := m.statusDoc(ctx, unit)
		answer = doc
		if err != nil {
			answer = map[string]string{"error": err.Error()}
		}
	case "reload":
		answer = m.reloadFor(ctx)
	default:
		answer = map[string]string{"error": fmt.Sprintf("unknown request %q", req)}
	}
	c.SetWriteDeadline(time.Now().Add(answerWait))
	json.NewEncoder(c).Encode(answer)
}

// statusDoc returns the status document from the shared snapshot, or the
// error of the master loop.
func (m *master) statusDoc(ctx context.Context, unit string) (statusDoc, error) {
	snap, err := m.snaps.get(ctx)
	if err != nil {
		return statusDoc{}, fmt.Errorf("master loop: %w", err)
	}
	return statusDoc{Version: version, PID: os.Getpid(), Unit: unit, Rate: m.report.rates.add(snap),
		Note: m.report.currentNote(), Snapshot: snap}, nil
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
