package notify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestNotifierVerbs(t *testing.T) {
	tests := []struct {
		name string
		call func(n *Notifier) error
		want string
	}{
		{"ready", (*Notifier).Ready, "READY=1"},
		{"stopping", (*Notifier).Stopping, "STOPPING=1"},
		{"status", func(n *Notifier) error { return n.Status("5 busy, 3 idle; queue 0") }, "STATUS=5 busy, 3 idle; queue 0"},
		{"status newline", func(n *Notifier) error { return n.Status("a\nb\r\nc") }, "STATUS=a b c"},
		{"extend timeout", func(n *Notifier) error { return n.ExtendTimeout(1500 * time.Millisecond) }, "EXTEND_TIMEOUT_USEC=1500000"},
		{"errno", func(n *Notifier) error { return n.Errno(98, "listen: address in use") }, "STATUS=listen: address in use\nERRNO=98"},
		{"errno without status", func(n *Notifier) error { return n.Errno(13, "") }, "ERRNO=13"},
		{"watchdog", (*Notifier).Watchdog, "WATCHDOG=1"},
		{"watchdog trigger", (*Notifier).WatchdogTrigger, "WATCHDOG=trigger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sd := newFakeSystemd(t)
			n := &Notifier{}
			if !n.Enabled() {
				t.Fatal("got Enabled false with NOTIFY_SOCKET set, want true")
			}
			if err := tt.call(n); err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if got := sd.next(t); got != tt.want {
				t.Fatalf("got datagram %q, want %q", got, tt.want)
			}
			sd.none(t)
		})
	}
}

func TestNotifierReloading(t *testing.T) {
	sd := newFakeSystemd(t)
	before := monotonicUsec(t)
	if err := (&Notifier{}).Reloading(); err != nil {
		t.Fatalf("got error %v, want nil", err)
	}
	after := monotonicUsec(t)
	got := sd.next(t)
	rest, ok := strings.CutPrefix(got, "RELOADING=1\nMONOTONIC_USEC=")
	usec, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || usec < before || usec > after {
		t.Fatalf("got datagram %q, want RELOADING=1 and MONOTONIC_USEC= between %d and %d", got, before, after)
	}
}

// monotonicUsec is CLOCK_MONOTONIC in microseconds.
func monotonicUsec(t *testing.T) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano() / 1000
}

func TestNotifierAbstractSocket(t *testing.T) {
	sd := listenNotify(t, "@actd-notify-test"+t.TempDir()) // the whole path: a name no other test run has
	if err := (&Notifier{}).Ready(); err != nil {
		t.Fatalf("got error %v, want nil", err)
	}
	if got := sd.next(t); got != "READY=1" {
		t.Fatalf("got datagram %q, want READY=1", got)
	}
}

func TestNotifierNoOp(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	os.Unsetenv("NOTIFY_SOCKET")
	tests := []struct {
		name string
		n    *Notifier
	}{
		{"nil", nil},
		{"zero without NOTIFY_SOCKET", &Notifier{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.n.Enabled() {
				t.Fatal("got Enabled true, want false")
			}
			for _, call := range []func() error{tt.n.Ready, tt.n.Stopping, tt.n.Reloading, tt.n.Watchdog, func() error { return tt.n.Status("x") }} {
				if err := call(); err != nil {
					t.Fatalf("got error %v, want nil", err)
				}
			}
		})
	}
}

func TestNotifierErrors(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "missing.sock"))
	err := (&Notifier{}).Ready()
	if err == nil || !strings.HasPrefix(err.Error(), "sd_notify READY: ") {
		t.Fatalf("got error %v, want one starting with \"sd_notify READY: \"", err)
	}
	err = (&Notifier{}).ExtendTimeout(0)
	if err == nil || !strings.Contains(err.Error(), "want a positive duration") {
		t.Fatalf("ExtendTimeout(0): got error %v, want one asking for a positive duration", err)
	}
}

func TestWithSend(t *testing.T) {
	var got []string
	n := WithSend(func(state string) error { got = append(got, state); return nil })
	n.Ready()
	n.Status("ok")
	if want := []string{"READY=1", "STATUS=ok"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWatchdogInterval(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	tests := []struct {
		name  string
		usec  string
		pid   string
		want  time.Duration
		wantO bool
	}{
		{name: "unset"},
		{name: "set, no pid", usec: "20000000", want: 20 * time.Second, wantO: true},
		{name: "set, our pid", usec: "3000000", pid: self, want: 3 * time.Second, wantO: true},
		{name: "set, other pid", usec: "3000000", pid: strconv.Itoa(os.Getppid())},
		{name: "malformed", usec: "soon"},
		{name: "zero", usec: "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setOrUnset(t, "WATCHDOG_USEC", tt.usec)
			setOrUnset(t, "WATCHDOG_PID", tt.pid)
			got, ok := WatchdogInterval()
			if got != tt.want || ok != tt.wantO {
				t.Fatalf("got %v, %v; want %v, %v", got, ok, tt.want, tt.wantO)
			}
			if os.Getenv("WATCHDOG_USEC") != tt.usec {
				t.Fatal("got WATCHDOG_USEC changed, want the environment left alone")
			}
		})
	}
}

// setOrUnset sets key to value for the test, or unsets it if value is empty.
func setOrUnset(t *testing.T, key, value string) {
	t.Setenv(key, value)
	if value == "" {
		os.Unsetenv(key)
	}
}
