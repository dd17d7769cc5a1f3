//go:build integration

package integration

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

// Unit names and paths of the package (packaging/).
const (
	socketUnit  = "actd.socket"
	serviceUnit = "actd.service"
	configPath  = "/etc/actd/actd.conf"
	actdBinary  = "/usr/bin/actd"
)

// statusLine matches the pool line actd puts in STATUS=, e.g.
// "5 busy, 3 idle, 1 starting of 9 (max 32); queue 0; 12034 served, 41/s; 2 respawned, 0 hung".
var statusLine = regexp.MustCompile(`(\d+) busy, (\d+) idle, (\d+) starting of (\d+) \(max (\d+)\); queue (\d+); (\d+) served, [0-9.]+/s; (\d+) respawned, (\d+) hung`)

// Indexes into the numbers of a pool line (poolNumbers).
const (
	poolBusy = iota
	poolIdle
	poolStarting
	poolTotal
	poolMax
	poolQueue
	poolServed
	poolRespawned
	poolHung
)

// ActdBox is a box with the actd package installed.
type ActdBox struct {
	*Box
	Bus  *sddbus.Conn
	dial dialer // reaches the box's network
}

// Pool describes how a test sets up the default pool before its socket
// is started.
type Pool struct {
	// Port for actd.socket through a drop-in; 0 keeps the package's
	// 127.0.0.1:7333.
	Port int
	// Config replaces /etc/actd/actd.conf when not empty.
	Config string
	// Service is added as a [Service] drop-in for actd.service when not empty.
	Service string
}

// Addr returns the address the pool's socket listens on.
func (p Pool) Addr() string {
	if p.Port == 0 {
		return "127.0.0.1:7333"
	}
	return fmt.Sprintf("127.0.0.1:%d", p.Port)
}

// NewActdBox boots a box on the host's network and installs the package
// built from this tree.
func NewActdBox(t *testing.T) *ActdBox {
	t.Helper()
	return NewActdBoxWith(t, BoxConfig{})
}

// NewActdBoxWith boots a box as cfg says and installs the package built
// from this tree.
func NewActdBoxWith(t *testing.T, cfg BoxConfig) *ActdBox {
	t.Helper()
	deb := buildDeb(t, "")
	b := NewBoxWith(t, cfg)
	a := &ActdBox{Box: b, Bus: b.Bus(), dial: hostDial}
	if cfg.OwnNetwork {
		a.dial = b.Dial
	}
	b.InstallDeb(deb)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("journal of the actd units:\n%s", a.Journal("actd*"))
		}
	})
	return a
}

// SetUp writes p's drop-ins and configuration, then enables and starts
// actd.socket. The service stays stopped until a connection arrives.
func (a *ActdBox) SetUp(p Pool) {
	a.t.Helper()
	if p.Port != 0 {
		a.WriteFile("/etc/systemd/system/actd.socket.d/listen.conf", socketDropIn(p.Port), 0o644)
	}
	if p.Service != "" {
		a.WriteFile("/etc/systemd/system/actd.service.d/test.conf", []byte("[Service]\n"+p.Service), 0o644)
	}
	if p.Config != "" {
		a.WriteFile(configPath, []byte(p.Config), 0o644)
	}
	a.Run("systemctl", "daemon-reload")
	a.Run("systemctl", "enable", "--now", socketUnit)
}

// socketDropIn returns a socket drop-in that replaces the unit's addresses
// with 127.0.0.1:port.
func socketDropIn(port int) []byte {
	return []byte(fmt.Sprintf("[Socket]\nListenStream=\nListenStream=127.0.0.1:%d\n", port))
}

// Activate sends the first request to addr, which starts unit through its
// socket, and waits until unit is active. It fails t when the request is
// not answered or the unit does not become active, and returns the state.
func (a *ActdBox) Activate(addr, unit string) ServiceState {
	a.t.Helper()
	if _, err := a.Get(addr, 30*time.Second); err != nil {
		a.t.Fatalf("first request to %s: %v\n%s", addr, err, a.Journal(unit))
	}
	return waitService(a.t, a.Bus, unit, 10*time.Second, "active", func(s ServiceState) bool {
		return s.ActiveState == "active"
	})
}

// Get sends one request to addr in the box's network; see get.
func (a *ActdBox) Get(addr string, timeout time.Duration) (Answer, error) {
	return getVia(a.dial, addr, timeout)
}

// WaitPoolLine waits up to timeout until unit's StatusText is a pool line
// for which ok holds, and returns the numbers in it (index with poolBusy...).
func (a *ActdBox) WaitPoolLine(unit string, timeout time.Duration, what string, ok func(n []int) bool) []int {
	a.t.Helper()
	var n []int
	waitService(a.t, a.Bus, unit, timeout, what, func(s ServiceState) bool {
		n = poolNumbers(s.StatusText)
		return n != nil && ok(n)
	})
	return n
}

// poolNumbers returns the numbers of a pool line, or nil if text is none.
func poolNumbers(text string) []int {
	m := statusLine.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	n := make([]int, len(m)-1)
	for i, s := range m[1:] {
		n[i], _ = strconv.Atoi(s)
	}
	return n
}

// Journal returns unit's journal in the box (message text only), for
// assertions and failure reports.
func (a *ActdBox) Journal(unit string) string {
	out, err := a.RunErr("journalctl", "--no-pager", "-o", "cat", "-u", unit)
	if err != nil {
		return fmt.Sprintf("journalctl -u %s: %v\n%s", unit, err, out)
	}
	return out
}

// ProcStat returns the CPU time (utime+stime, in clock ticks) of pid in the
// box, read from /proc/PID/stat.
func (a *ActdBox) ProcStat(pid uint32) int {
	a.t.Helper()
	stat := a.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	// The command name is in parentheses and may hold spaces: split after it.
	fields := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	utime, err1 := strconv.Atoi(fields[11])
	stime, err2 := strconv.Atoi(fields[12])
	if err1 != nil || err2 != nil {
		a.t.Fatalf("parse /proc/%d/stat %q: %v %v", pid, stat, err1, err2)
	}
	return utime + stime
}

// LastPID returns the last PID allocated in the box's PID namespace.
func (a *ActdBox) LastPID() int {
	a.t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(a.ReadFile("/proc/sys/kernel/ns_last_pid")))
	if err != nil {
		a.t.Fatalf("read ns_last_pid: %v", err)
	}
	return n
}
