//go:build integration

package integration

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// installHelper copies the test binary into the box and installs a socket
// unit on port with a Type=notify service that runs it as notify-echo;
// serviceExtra is added to the [Service] section.
func installHelper(t *testing.T, b *Box, port int, serviceExtra string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b.CopyIn(self, "/usr/local/bin/actd-it-helper")
	b.WriteFile("/etc/systemd/system/smoke.socket", []byte(fmt.Sprintf(
		"[Socket]\nListenStream=127.0.0.1:%d\nFileDescriptorName=smoke\n\n[Install]\nWantedBy=sockets.target\n", port)), 0o644)
	b.WriteFile("/etc/systemd/system/smoke.service", []byte(
		"[Service]\nType=notify\nEnvironment="+helperEnv+"=notify-echo\nExecStart=/usr/local/bin/actd-it-helper\n"+serviceExtra), 0o644)
	b.Run("systemctl", "daemon-reload")
}

// readLine dials addr and returns the first line it answers.
func readLine(addr string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	data, err := io.ReadAll(conn)
	return strings.TrimSpace(string(data)), err
}

// TestHarnessSmoke proves the harness without actd: a socket unit activates
// a Type=notify service on the first connection, the service's STATUS=
// reaches D-Bus and systemctl status, and the box is torn down afterwards.
func TestHarnessSmoke(t *testing.T) {
	b := NewBox(t)
	conn := b.Bus()
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	installHelper(t, b, port, "")
	b.Run("systemctl", "enable", "--now", "smoke.socket")

	if got := unitActiveState(t, conn, "smoke.service"); got != "inactive" {
		t.Errorf("smoke.service before the first connection: got %s, want inactive", got)
	}
	line, err := readLine(addr, 10*time.Second)
	if err != nil || !strings.HasPrefix(line, "notify-echo pid=") {
		t.Fatalf("first connection: got %q, %v; want notify-echo pid=P", line, err)
	}
	st := waitService(t, conn, "smoke.service", 10*time.Second, "active", func(s ServiceState) bool {
		return s.ActiveState == "active"
	})
	if want := "notify-echo serving on smoke"; st.StatusText != want {
		t.Errorf("StatusText: got %q, want %q", st.StatusText, want)
	}
	if got := strings.TrimPrefix(line, "notify-echo pid="); got != fmt.Sprint(st.MainPID) {
		t.Errorf("answering PID: got %s, want MainPID %d", got, st.MainPID)
	}
	out, _ := b.RunErr("systemctl", "status", "--no-pager", "smoke.service")
	if !strings.Contains(out, `Status: "notify-echo serving on smoke"`) {
		t.Errorf("systemctl status smoke.service: no Status line in\n%s", out)
	}
}

// TestHarnessWatchdog proves that the harness sees a watchdog restart: the
// helper's main process is frozen with SIGSTOP, systemd kills it
// (Result=watchdog, seen through PropertiesChanged) and restarts it
// (NRestarts=1), and connections made meanwhile wait in the socket's queue
// and are answered. (WatchdogSignal=SIGKILL: with the default SIGABRT and
// SIGCONT the helper may accept a queued connection on its way out.)
func TestHarnessWatchdog(t *testing.T) {
	b := NewBox(t)
	conn := b.Bus()
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	installHelper(t, b, port, "WatchdogSec=2s\nWatchdogSignal=SIGKILL\nRestart=on-failure\nRestartSec=100ms\n")
	b.Run("systemctl", "enable", "--now", "smoke.socket")
	watch := b.Watch("smoke.service")
	if _, err := readLine(addr, 10*time.Second); err != nil {
		t.Fatalf("first connection: %v", err)
	}
	before := waitService(t, conn, "smoke.service", 10*time.Second, "active", func(s ServiceState) bool {
		return s.ActiveState == "active"
	})

	b.Run("systemctl", "kill", "--kill-who=main", "--signal=SIGSTOP", "smoke.service")
	line, err := readLine(addr, 30*time.Second)
	if err != nil || !strings.HasPrefix(line, "notify-echo pid=") {
		t.Errorf("connection made while frozen: got %q, %v; want an answer after the restart", line, err)
	}
	after := waitService(t, conn, "smoke.service", 20*time.Second, "restarted", func(s ServiceState) bool {
		return s.ActiveState == "active" && s.NRestarts >= 1
	})
	if after.NRestarts != 1 {
		t.Errorf("NRestarts: got %d, want 1", after.NRestarts)
	}
	if after.MainPID == before.MainPID {
		t.Errorf("MainPID: got %d again, want a new process", after.MainPID)
	}
	requireSaw(t, watch, "Service.Result", "watchdog")
}
