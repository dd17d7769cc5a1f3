//go:build integration

package integration

import (
	"fmt"
	"sync"
	"testing"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// PropertyWatch records every value a unit's properties take, as systemd
// announces them in PropertiesChanged signals. Polling can miss a state that
// lasts 100 ms (Result=watchdog between the abort and the restart); the
// signals do not.
type PropertyWatch struct {
	mu   sync.Mutex
	seen map[string][]any // "Service.Result" → values in order
}

// Watch subscribes to unit's property changes on the box's bus until the
// test ends. It fails t when the subscription cannot be set up.
func (b *Box) Watch(unit string) *PropertyWatch {
	b.t.Helper()
	b.Bus() // skips when the box has no bus
	conn, err := dialBus(fmt.Sprintf("unix:path=/proc/%d/root%s", b.PID, busSocket))
	if err != nil {
		b.t.Fatalf("watch %s: %v", unit, err)
	}
	b.t.Cleanup(func() { conn.Close() })
	path := dbus.ObjectPath("/org/freedesktop/systemd1/unit/" + sddbus.PathBusEscape(unit))
	err = conn.AddMatchSignal(
		dbus.WithMatchObjectPath(path),
		dbus.WithMatchInterface("org.freedesktop.DBus.Properties"),
		dbus.WithMatchMember("PropertiesChanged"))
	if err != nil {
		b.t.Fatalf("watch %s: add match: %v", unit, err)
	}
	manager := conn.Object("org.freedesktop.systemd1", "/org/freedesktop/systemd1")
	if err := manager.Call("org.freedesktop.systemd1.Manager.Subscribe", 0).Err; err != nil {
		b.t.Fatalf("watch %s: subscribe: %v", unit, err)
	}
	w := &PropertyWatch{seen: make(map[string][]any)}
	ch := make(chan *dbus.Signal, 256)
	conn.Signal(ch)
	go w.record(ch)
	return w
}

// record stores the changed properties of every signal until ch closes.
func (w *PropertyWatch) record(ch <-chan *dbus.Signal) {
	for sig := range ch {
		if len(sig.Body) < 2 {
			continue
		}
		iface, _ := sig.Body[0].(string)
		changed, _ := sig.Body[1].(map[string]dbus.Variant)
		w.mu.Lock()
		for name, v := range changed {
			key := trimInterface(iface) + "." + name
			w.seen[key] = append(w.seen[key], v.Value())
		}
		w.mu.Unlock()
	}
}

// trimInterface turns org.freedesktop.systemd1.Service into Service.
func trimInterface(iface string) string {
	const prefix = "org.freedesktop.systemd1."
	if len(iface) > len(prefix) && iface[:len(prefix)] == prefix {
		return iface[len(prefix):]
	}
	return iface
}

// Values returns the values seen so far of key ("Service.Result",
// "Unit.ActiveState", ...), oldest first.
func (w *PropertyWatch) Values(key string) []any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]any(nil), w.seen[key]...)
}

// Saw reports whether key has taken value.
func (w *PropertyWatch) Saw(key string, value any) bool {
	for _, v := range w.Values(key) {
		if v == value {
			return true
		}
	}
	return false
}

// requireSaw fails t unless w saw key take value.
func requireSaw(t *testing.T, w *PropertyWatch, key string, value any) {
	t.Helper()
	if !w.Saw(key, value) {
		t.Errorf("%s: got values %v, want one of them %v", key, w.Values(key), value)
	}
}
