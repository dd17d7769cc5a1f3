//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// busSocket is the box's system bus socket, as seen from inside the box.
const busSocket = "/run/dbus/system_bus_socket"

// Bus returns a go-systemd connection to the box's systemd through the box's
// system bus, reached from the host at /proc/PID/root/run/dbus/... . It skips
// t when the box has no system bus (Debian's dbus package is not installed on
// the host, so not in the box either) and fails t when the bus does not
// answer. The connection is closed when the test ends.
func (b *Box) Bus() *sddbus.Conn {
	b.t.Helper()
	if _, err := os.Stat("/usr/bin/dbus-daemon"); err != nil {
		b.t.Skip("skipping: no D-Bus in the box (install the Debian package dbus)")
	}
	addr := fmt.Sprintf("unix:path=/proc/%d/root%s", b.PID, busSocket)
	var conn *sddbus.Conn
	var err error
	// dbus.socket is up before the box reports running; allow a moment anyway.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err = sddbus.NewConnection(func() (*dbus.Conn, error) { return dialBus(addr) })
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		b.t.Fatalf("connect to the system bus of box %s: %v", b.Name, err)
	}
	b.t.Cleanup(conn.Close)
	return conn
}

// dialBus opens, authenticates (EXTERNAL, as root) and says Hello on a new
// private connection to the bus at addr.
func dialBus(addr string) (*dbus.Conn, error) {
	conn, err := dbus.Dial(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if err := conn.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("auth on %s: %w", addr, err)
	}
	if err := conn.Hello(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("hello on %s: %w", addr, err)
	}
	return conn, nil
}

// ServiceState is what a test reads of a service unit over D-Bus.
type ServiceState struct {
	ActiveState    string
	SubState       string
	Result         string
	StatusText     string
	NRestarts      uint32
	MainPID        uint32 // in the box's PID namespace
	ExecMainStatus int32
}

// serviceState reads unit's state over conn; it fails t on a D-Bus error.
func serviceState(t *testing.T, conn *sddbus.Conn, unit string) ServiceState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := conn.GetUnitPropertiesContext(ctx, unit)
	if err != nil {
		t.Fatalf("read properties of %s: %v", unit, err)
	}
	s, err := conn.GetUnitTypePropertiesContext(ctx, unit, "Service")
	if err != nil {
		t.Fatalf("read service properties of %s: %v", unit, err)
	}
	var st ServiceState
	st.ActiveState, _ = u["ActiveState"].(string)
	st.SubState, _ = u["SubState"].(string)
	st.Result, _ = s["Result"].(string)
	st.StatusText, _ = s["StatusText"].(string)
	st.NRestarts, _ = s["NRestarts"].(uint32)
	st.MainPID, _ = s["MainPID"].(uint32)
	st.ExecMainStatus, _ = s["ExecMainStatus"].(int32)
	return st
}

// waitService polls unit's state every 50 ms until ok accepts it and returns
// that state; it fails t with the last state seen after timeout.
func waitService(t *testing.T, conn *sddbus.Conn, unit string, timeout time.Duration, what string, ok func(ServiceState) bool) ServiceState {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := serviceState(t, conn, unit)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not %s after %v; last state %+v", unit, what, timeout, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unitActiveState reads ActiveState of any unit (socket, service, ...).
func unitActiveState(t *testing.T, conn *sddbus.Conn, unit string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := conn.GetUnitPropertyContext(ctx, unit, "ActiveState")
	if err != nil {
		t.Fatalf("read ActiveState of %s: %v", unit, err)
	}
	s, _ := p.Value.Value().(string)
	return s
}
