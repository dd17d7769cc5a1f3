//go:build integration

package integration

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	sdactivation "github.com/coreos/go-systemd/v22/activation"
	sddaemon "github.com/coreos/go-systemd/v22/daemon"
)

// helperEnv names the role the test binary plays when a box runs it as a
// service: "notify-echo" is a socket-activated Type=notify daemon.
const helperEnv = "ACTD_IT_HELPER"

// TestMain turns the test binary into a helper daemon when helperEnv says so;
// otherwise it removes box cgroups a killed earlier run left, runs the tests
// and removes the packages built for them.
func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	if os.Geteuid() == 0 {
		if err := sweepStaleCgroups(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	code := m.Run()
	removeBuiltDebs()
	os.Exit(code)
}

// runHelper plays role and returns the exit status.
func runHelper(role string) int {
	if role != "notify-echo" {
		fmt.Fprintf(os.Stderr, "unknown helper role %q\n", role)
		return 64
	}
	if err := notifyEcho(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// notifyEcho takes its one socket from systemd, says READY=1 with a STATUS=,
// pets the watchdog at half WATCHDOG_USEC when asked to, and answers every
// connection with "notify-echo pid=P\n".
func notifyEcho() error {
	files := sdactivation.Files(true)
	if len(files) != 1 {
		return fmt.Errorf("notify-echo: got %d sockets from systemd, want 1", len(files))
	}
	ln, err := net.FileListener(files[0])
	if err != nil {
		return fmt.Errorf("notify-echo: %w", err)
	}
	if _, err := sddaemon.SdNotify(false, "READY=1\nSTATUS=notify-echo serving on "+files[0].Name()); err != nil {
		return fmt.Errorf("notify-echo: notify: %w", err)
	}
	if interval, err := sddaemon.SdWatchdogEnabled(false); err == nil && interval > 0 {
		go func() {
			for range time.Tick(interval / 2) {
				sddaemon.SdNotify(false, sddaemon.SdNotifyWatchdog)
			}
		}()
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("notify-echo: accept: %w", err)
		}
		fmt.Fprintf(conn, "notify-echo pid=%d\n", os.Getpid())
		conn.Close()
	}
}
